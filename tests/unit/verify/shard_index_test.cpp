// SPDX-License-Identifier: MIT
#include "verify/shard_index.hpp"

#include <gtest/gtest.h>

namespace hfget::verify {
namespace {

TEST(ParseShardIndex, ReadsTotalSizeAndWeightMap) {
  const ShardIndexParse parsed = parse_shard_index(R"({"metadata": {"total_size": 1234},
      "weight_map": {"lm_head.weight": "model-00002-of-00002.safetensors",
                     "embed.weight": "model-00001-of-00002.safetensors"}})");
  ASSERT_TRUE(parsed.index) << parsed.problem;
  EXPECT_EQ(parsed.index->total_size, 1234U);
  ASSERT_EQ(parsed.index->weight_map.size(), 2U);
  EXPECT_EQ(parsed.index->weight_map.at("lm_head.weight"), "model-00002-of-00002.safetensors");
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
