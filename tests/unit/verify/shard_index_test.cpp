// SPDX-License-Identifier: MIT
#include "verify/shard_index.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.hpp"

namespace hfget::verify {
namespace {

TEST(ParseShardIndex, ReadsTotalSizeAndWeightMap) {
  const ShardIndexParse parsed = parse_shard_index(R"({"metadata": {"total_size": 1234},
      "weight_map": {"lm_head.weight": "model-00002-of-00002.safetensors",
                     "embed.weight": "model-00001-of-00002.safetensors"}})");
  ASSERT_TRUE(parsed.index) << parsed.problem;
  EXPECT_EQ(parsed.index->total_size, 1234U);
  ASSERT_EQ(parsed.index->weight_map.size(), 2U);
  EXPECT_EQ(parsed.index->weight_map.shard_of("lm_head.weight"), "model-00002-of-00002.safetensors");
}

TEST(ParseShardIndex, AcceptsAFloatTotalSize) {
  const ShardIndexParse parsed = parse_shard_index(R"({"metadata": {"total_size": 372864.0}, "weight_map": {}})");
  ASSERT_TRUE(parsed.index);
  EXPECT_EQ(parsed.index->total_size, 372864U);
}

TEST(ParseShardIndex, TotalSizeIsOptional) {
  for (const char* json : {R"({"weight_map": {}})", R"({"metadata": {}, "weight_map": {}})",
                           R"({"metadata": {"total_size": "big"}, "weight_map": {}})",
                           R"({"metadata": {"total_size": -5}, "weight_map": {}})"}) {
    const ShardIndexParse parsed = parse_shard_index(json);
    ASSERT_TRUE(parsed.index) << json;
    EXPECT_EQ(parsed.index->total_size, std::nullopt) << json;
  }
}

TEST(ParseShardIndex, RejectsAnIndexWithoutAWeightMap) {
  for (const char* json :
       {"", "[]", "{", R"({"metadata": {}})", R"({"weight_map": []})", R"({"weight_map": {"a": 1}})"}) {
    const ShardIndexParse parsed = parse_shard_index(json);
    EXPECT_FALSE(parsed.index) << json;
    EXPECT_FALSE(parsed.problem.empty()) << json;
  }
}

TEST(ParseShardIndex, KeepsTheWeightMapSortedWithEachShardFileOnce) {
  const ShardIndexParse parsed = parse_shard_index(R"({"weight_map": {"c": "s2", "a": "s1", "b": "s2", "d": "s1"}})");
  ASSERT_TRUE(parsed.index) << parsed.problem;
  const WeightMap& map = parsed.index->weight_map;
  ASSERT_EQ(map.size(), 4U);
  EXPECT_EQ(map.shards(), (std::vector<std::string>{"s2", "s1"}));
  for (std::size_t i = 0; i < map.size(); ++i) {
    EXPECT_EQ(map.tensor(i), std::string(1, static_cast<char>('a' + i)));
    EXPECT_EQ(map.find(map.tensor(i)), i);
  }
  EXPECT_EQ(map.shard(0), "s1");
  EXPECT_EQ(map.shard(2), "s2");
  EXPECT_EQ(map.shard_of("e"), std::nullopt);
  EXPECT_EQ(map.find(""), std::nullopt);
}

TEST(ParseShardIndex, ReadsTheLastOfARepeatedKey) {
  // As a parsed JSON object (and transformers' loader) would: the last value of a key counts.
  const ShardIndexParse parsed = parse_shard_index(
      R"({"weight_map": {"x": "old"}, "metadata": {"total_size": 5, "total_size": "?"}, "weight_map": {"a": "s1",)"
      R"( "b": "s1", "a": "s2"}})");
  ASSERT_TRUE(parsed.index) << parsed.problem;
  EXPECT_EQ(parsed.index->total_size, std::nullopt);
  ASSERT_EQ(parsed.index->weight_map.size(), 2U);
  EXPECT_EQ(parsed.index->weight_map.shard_of("a"), "s2");
  EXPECT_EQ(parsed.index->weight_map.shard_of("x"), std::nullopt);
  EXPECT_TRUE(parse_shard_index(R"({"weight_map": {"a": 1}, "weight_map": {}})").index);
  EXPECT_FALSE(parse_shard_index(R"({"weight_map": {}, "weight_map": 1})").index);
}

TEST(ParseShardIndex, ReadsOnlyTheTopLevelKeys) {
  const ShardIndexParse parsed = parse_shard_index(
      R"({"extra": {"weight_map": {"x": "s"}, "metadata": {"total_size": 9}}, "weight_map": {"a": "s"}})");
  ASSERT_TRUE(parsed.index) << parsed.problem;
  EXPECT_EQ(parsed.index->weight_map.size(), 1U);
  EXPECT_EQ(parsed.index->total_size, std::nullopt);
}

// Hostile indexes (security issue 14): bounded memory and linear time, whatever the index holds.

std::string repeated(const std::string& unit, std::size_t count, const std::string& separator = ",") {
  std::string text;
  text.reserve((unit.size() + separator.size()) * count);
  for (std::size_t i = 0; i < count; ++i) text += (i == 0 ? "" : separator) + unit;
  return text;
}

TEST(ParseShardIndex, RefusesDeepNestingAtOnce) {
  for (const std::string& json : {R"({"metadata": {"x": )" + std::string(10'000'000, '['),
                                  R"({"weight_map": {}, "x": )" + repeated(R"({"a": )", 40, "")}) {
    const ShardIndexParse parsed = parse_shard_index(json);
    EXPECT_FALSE(parsed.index);
    EXPECT_NE(parsed.problem.find("nested more than 32 levels deep"), std::string::npos) << parsed.problem;
  }
}

TEST(ParseShardIndex, SkipsWhatItDoesNotUse) {
  const std::string json = R"({"metadata": {"total_size": 7, "junk": [)" + repeated("{}", 1'000'000) +
                           R"(], "note": ")" + std::string(8 << 20, 'x') + R"("}, "weight_map": {"a": "s"}})";
  const ShardIndexParse parsed = parse_shard_index(json);
  ASSERT_TRUE(parsed.index) << parsed.problem;
  EXPECT_EQ(parsed.index->total_size, 7U);
  EXPECT_EQ(parsed.index->weight_map.size(), 1U);
}

TEST(ParseShardIndex, RefusesMoreShardFilesThanANameCanNumber) {
  std::string json = R"({"weight_map": {)";
  for (std::size_t i = 0; i <= WeightMap::kMaxShards; ++i) json += fmt::format(R"({}"t{}": "s{}")", i ? "," : "", i, i);
  json += "}}";
  const ShardIndexParse parsed = parse_shard_index(json);
  EXPECT_FALSE(parsed.index);
  EXPECT_NE(parsed.problem.find("more than 100000 shard files"), std::string::npos) << parsed.problem;
}

TEST(ParseShardIndex, ClipsAHugeTensorNameInItsProblem) {
  const ShardIndexParse parsed = parse_shard_index(R"({"weight_map": {")" + std::string(4 << 20, 't') + R"(": 1}})");
  EXPECT_FALSE(parsed.index);
  EXPECT_LT(parsed.problem.size(), 1000U);
  EXPECT_NE(parsed.problem.find("is not a file name"), std::string::npos);
}

TEST(ParseShardIndex, ReadsAManyShardIndex) {
  // The shape of a 1T-parameter MoE model's index (64 shards), at a tenth of its ~200 K tensors.
  std::string json = R"({"metadata": {"total_size": 2000000000000}, "weight_map": {)";
  for (std::size_t i = 0; i < 20'000; ++i) {
    json += fmt::format(R"({}"model.layers.{}.mlp.experts.{}.gate_proj.weight": "model-{:05}-of-00064.safetensors")",
                        i ? ", " : "", i / 320, i % 320, i % 64 + 1);
  }
  json += "}}";
  const ShardIndexParse parsed = parse_shard_index(json);
  ASSERT_TRUE(parsed.index) << parsed.problem;
  EXPECT_EQ(parsed.index->weight_map.size(), 20'000U);
  EXPECT_EQ(parsed.index->weight_map.shards().size(), 64U);
}

TEST(ReadShardIndex, StreamsTheFileAndRefusesOneTooLarge) {
  const test_support::TempDir dir;
  const std::string json = R"({"weight_map": {"a": "s", "pad": ")" + std::string(1 << 20, 'p') + R"("}})";
  std::ofstream(dir / "model.safetensors.index.json", std::ios::binary) << json;
  const ShardIndexParse parsed = read_shard_index(dir / "model.safetensors.index.json");
  ASSERT_TRUE(parsed.index) << parsed.problem;
  EXPECT_EQ(parsed.index->weight_map.size(), 2U);

  std::ofstream(dir / "big.json", std::ios::binary) << "{}";
  std::filesystem::resize_file(dir / "big.json", (256 << 20) + 1);  // sparse
  EXPECT_NE(read_shard_index(dir / "big.json").problem.find("more than the 268435456"), std::string::npos);
  EXPECT_NE(read_shard_index(dir / "missing.json").problem.find("cannot read the index"), std::string::npos);
}

TEST(ParseShardName, SplitsStemNumberCountAndExtension) {
  const std::optional<ShardName> name = parse_shard_name("model-00003-of-00064.safetensors");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->stem, "model");
  EXPECT_EQ(name->number, 3U);
  EXPECT_EQ(name->count, 64U);
  EXPECT_EQ(name->extension, ".safetensors");
}

TEST(ParseShardName, HandlesDotsAndDashesInTheStem) {
  const std::optional<ShardName> name = parse_shard_name("pytorch_model-v1.5-00001-of-00002.bin");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->stem, "pytorch_model-v1.5");
  EXPECT_EQ(name->number, 1U);
  EXPECT_EQ(name->count, 2U);
  EXPECT_EQ(name->extension, ".bin");
}

TEST(ParseShardName, RejectsNamesThatAreNotShards) {
  for (const char* file :
       {"model.safetensors", "model-00001.safetensors", "model-of-00002.safetensors", "model-x-of-00002.safetensors",
        "model-00001-of-.safetensors", "model-00001-of-00000.safetensors", "-of-2.bin", "config.json"}) {
    EXPECT_EQ(parse_shard_name(file), std::nullopt) << file;
  }
}

TEST(IsShardIndexName, RecognisesSafetensorsAndBinIndexes) {
  EXPECT_TRUE(is_shard_index_name("model.safetensors.index.json"));
  EXPECT_TRUE(is_shard_index_name("pytorch_model.bin.index.json"));
  EXPECT_TRUE(is_shard_index_name("diffusion_pytorch_model.fp16.safetensors.index.json"));
  EXPECT_FALSE(is_shard_index_name("model.safetensors"));
  EXPECT_FALSE(is_shard_index_name("index.json"));
  EXPECT_FALSE(is_shard_index_name("model.gguf.index.json"));
}

}  // namespace
}  // namespace hfget::verify
