// SPDX-License-Identifier: MIT
// The shard_set and safetensors_headers checks on generated models: a trillion-parameter layout (64 shards,
// 200 K tensors) verifies quickly, and an index that disagrees with a header by thousands of tensors names
// a bounded number of them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"
#include "verify/snapshot_checks.hpp"

namespace hfget::verify {
namespace {

// A safetensors file whose tensors are all empty ([0] elements, spans [0, 0]): a valid header with no data.
void write_empty_shard(const std::filesystem::path& path, const std::vector<std::string>& tensors) {
  std::string json = "{";
  for (const std::string& name : tensors) {
    json += fmt::format(R"({}"{}": {{"dtype": "BF16", "shape": [0, 4096], "data_offsets": [0, 0]}})",
                        json.size() > 1 ? ", " : "", name);
  }
  json += "}";
  std::string prefix(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) prefix[i] = static_cast<char>((json.size() >> (8 * i)) & 0xFFU);
  std::ofstream(path, std::ios::binary) << prefix << json;
}

std::string shard_name(std::size_t number, std::size_t count) {
  return fmt::format("model-{:05}-of-{:05}.safetensors", number, count);
}

void write_index(const std::filesystem::path& path, const std::vector<std::pair<std::string, std::string>>& map) {
  std::string json = R"({"metadata": {"total_size": 0}, "weight_map": {)";
  for (std::size_t i = 0; i < map.size(); ++i) {
    json += fmt::format(R"({}"{}": "{}")", i ? ", " : "", map[i].first, map[i].second);
  }
  json += "}}";
  std::ofstream(path, std::ios::binary) << json;
}

class ShardChecks : public ::testing::Test {
 protected:
  VerifyReport run() {
    SnapshotOnDisk snapshot;
    snapshot.root = dir_.path();
    snapshot.commit = std::string(40, 'a');
    CheckSettings settings;
    settings.hash = false;
    VerifyReport report;
    run_snapshot_checks(snapshot, settings, report, {});
    return report;
  }

  static const CheckResult& check_of(const VerifyReport& report, const std::string& name) {
    const auto it = std::find_if(report.checks.begin(), report.checks.end(),
                                 [&](const CheckResult& check) { return check.name == name; });
    if (it == report.checks.end()) throw std::runtime_error("no check named " + name);
    return *it;
  }

  static std::vector<std::string> causes(const VerifyReport& report, const std::string& path) {
    std::vector<std::string> found;
    for (const FileProblem& problem : report.problems) {
      if (problem.path == path) found.push_back(problem.cause);
    }
    return found;
  }

  test_support::TempDir dir_;
};

TEST_F(ShardChecks, VerifiesAManyShardLayout) {
  // The shape of a trillion-parameter model (64 shards, one index), at a tenth of its 200 K tensors; the
  // whole size is what bench/ and tests/integration/test_hostile_json.py measure.
  constexpr std::size_t kShards = 64;
  constexpr std::size_t kPerShard = 300;
  std::vector<std::pair<std::string, std::string>> map;
  for (std::size_t shard = 1; shard <= kShards; ++shard) {
    std::vector<std::string> tensors;
    for (std::size_t i = 0; i < kPerShard; ++i) {
      tensors.push_back(fmt::format("model.layers.{}.mlp.experts.{}.down_proj.weight", shard, i));
      map.emplace_back(tensors.back(), shard_name(shard, kShards));
    }
    write_empty_shard(dir_ / shard_name(shard, kShards), tensors);
  }
  write_index(dir_ / "model.safetensors.index.json", map);

  const VerifyReport report = run();
  EXPECT_EQ(check_of(report, "shard_set").status, CheckStatus::kPass) << check_of(report, "shard_set").detail;
  EXPECT_EQ(check_of(report, "safetensors_headers").status, CheckStatus::kPass);
  EXPECT_EQ(check_of(report, "safetensors_headers").detail, "64 file(s), 19200 tensors, spans exact and contiguous");
  EXPECT_EQ(report.shards_present, kShards);
}

TEST_F(ShardChecks, NamesABoundedNumberOfMismatchedTensors) {
  // Shard 1's header has 100 tensors the index does not map; the index maps 50 more to it that it lacks.
  std::vector<std::pair<std::string, std::string>> map{{"kept", shard_name(1, 2)}, {"other", shard_name(2, 2)}};
  std::vector<std::string> header{"kept"};
  for (std::size_t i = 0; i < 100; ++i) header.push_back(fmt::format("unindexed.{:03}", i));
  for (std::size_t i = 0; i < 50; ++i) map.emplace_back(fmt::format("absent.{:03}", i), shard_name(1, 2));
  write_empty_shard(dir_ / shard_name(1, 2), header);
  write_empty_shard(dir_ / shard_name(2, 2), {"other"});
  write_index(dir_ / "model.safetensors.index.json", map);

  const VerifyReport report = run();
  EXPECT_EQ(check_of(report, "safetensors_headers").status, CheckStatus::kFail);
  const std::vector<std::string> found = causes(report, shard_name(1, 2));
  ASSERT_EQ(found.size(), 42U);
  EXPECT_EQ(found[0],
            "tensor 'absent.000' is mapped to this shard by model.safetensors.index.json but not in its header");
  EXPECT_EQ(found[19],
            "tensor 'absent.019' is mapped to this shard by model.safetensors.index.json but not in its header");
  EXPECT_EQ(found[20],
            "30 more tensor(s) are mapped to this shard by model.safetensors.index.json but not in its header");
  EXPECT_EQ(found[21], "tensor 'unindexed.000' is missing from model.safetensors.index.json");
  EXPECT_EQ(found[41], "80 more tensor(s) of this shard are missing from model.safetensors.index.json");
  EXPECT_TRUE(causes(report, shard_name(2, 2)).empty());
}

TEST_F(ShardChecks, ReportsAHostileIndexOnceAndStillChecksTheHeaders) {
  write_empty_shard(dir_ / "model.safetensors", {"a"});
  std::ofstream(dir_ / "model.safetensors.index.json")
      << R"({"weight_map": {"a": "model.safetensors"}, "x": )" << std::string(1'000'000, '[');
  const VerifyReport report = run();
  EXPECT_EQ(check_of(report, "shard_set").status, CheckStatus::kFail);
  EXPECT_EQ(causes(report, "model.safetensors.index.json"),
            (std::vector<std::string>{"the index is nested more than 32 levels deep"}));
  EXPECT_EQ(check_of(report, "safetensors_headers").status, CheckStatus::kPass);
}

TEST_F(ShardChecks, ComparesTheHeadersWithEveryIndexThatNamesThem) {
  // Two indexes in two folders, each with its own shards: a mismatch is reported against the right one.
  std::filesystem::create_directory(dir_ / "a");
  std::filesystem::create_directory(dir_ / "b");
  write_empty_shard(dir_ / "a" / shard_name(1, 1), {"x"});
  write_empty_shard(dir_ / "b" / shard_name(1, 1), {"x", "y"});
  write_index(dir_ / "a" / "model.safetensors.index.json", {{"x", shard_name(1, 1)}});
  write_index(dir_ / "b" / "model.safetensors.index.json", {{"x", shard_name(1, 1)}});
  const VerifyReport report = run();
  EXPECT_TRUE(causes(report, "a/" + shard_name(1, 1)).empty());
  EXPECT_EQ(causes(report, "b/" + shard_name(1, 1)),
            (std::vector<std::string>{"tensor 'y' is missing from b/model.safetensors.index.json"}));
}

}  // namespace
}  // namespace hfget::verify
