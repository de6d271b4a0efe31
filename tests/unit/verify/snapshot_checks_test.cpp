// SPDX-License-Identifier: MIT
// The checks of `hfget verify` on a copy of the real transformers-written model, broken in one way per test.
#include "verify/snapshot_checks.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "../support/temp_dir.hpp"
#include "crypto/digest.hpp"

namespace hfget::verify {
namespace {

const std::filesystem::path kModel = std::filesystem::path(HFGET_FIXTURES_DIR) / "real-writers" / "tiny-llama-sharded";

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The listing an oracle would give for `root`: safetensors files are LFS (sha256), the rest git blobs.
std::vector<RemoteFile> listing_of(const std::filesystem::path& root) {
  std::vector<RemoteFile> files;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    const std::string content = read_all(entry.path());
    const auto bytes = std::as_bytes(std::span(content.data(), content.size()));
    RemoteFile file;
    file.path = entry.path().filename().string();
    file.size = content.size();
    crypto::GitBlobSha1 blob(content.size());
    blob.update(bytes);
    file.blob_id = blob.finish_hex();
    if (entry.path().extension() == ".safetensors") {
      crypto::Digest sha256 = crypto::Digest::sha256();
      sha256.update(bytes);
      file.lfs_sha256 = sha256.finish_hex();
      file.lfs_size = file.size;
    }
    files.push_back(file);
  }
  return files;
}

class SnapshotChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::copy(kModel, dir_.path() / "m");
    for (const auto& entry : std::filesystem::directory_iterator(dir_ / "m")) {
      std::filesystem::permissions(entry.path(), std::filesystem::perms::owner_write,
                                   std::filesystem::perm_options::add);
    }
    snapshot_.root = dir_ / "m";
    snapshot_.commit = std::string(40, 'a');
    snapshot_.listing = listing_of(snapshot_.root);
  }

  VerifyReport run(CheckSettings settings = {}) {
    VerifyReport report;
    run_snapshot_checks(snapshot_, settings, report, {});
    return report;
  }

  static CheckStatus status_of(const VerifyReport& report, const std::string& name) {
    for (const CheckResult& check : report.checks) {
      if (check.name == name) return check.status;
    }
    ADD_FAILURE() << "no check named " << name;
    return CheckStatus::kFail;
  }

  static bool has_problem(const VerifyReport& report, const std::string& path, const std::string& cause_part) {
    return std::any_of(report.problems.begin(), report.problems.end(), [&](const FileProblem& p) {
      return p.path == path && p.cause.find(cause_part) != std::string::npos;
    });
  }

  std::filesystem::path shard(int number) const {
    return snapshot_.root / ("model-0000" + std::to_string(number) + "-of-00004.safetensors");
  }

  test_support::TempDir dir_;
  SnapshotOnDisk snapshot_;
};

TEST_F(SnapshotChecks, PassesACleanModel) {
  const VerifyReport report = run();
  EXPECT_TRUE(report.ok());
  EXPECT_TRUE(report.problems.empty());
  EXPECT_EQ(report.shards_present, 4U);
  EXPECT_EQ(report.shards_expected, 4U);
  EXPECT_EQ(report.files_present, 9U);
  EXPECT_TRUE(report.has_listing);
  EXPECT_TRUE(report.hashed);
  EXPECT_GT(report.bytes_expected, 0U);
  EXPECT_EQ(report.bytes_present, report.bytes_expected);
  EXPECT_EQ(report.bytes_hashed, report.bytes_expected);
}

TEST_F(SnapshotChecks, WithoutAListingCountsTheBytesOnDisk) {
  std::uint64_t on_disk = 0;
  for (const RemoteFile& file : *snapshot_.listing) on_disk += file.size;
  snapshot_.listing.reset();
  const VerifyReport report = run();
  EXPECT_FALSE(report.has_listing);
  EXPECT_FALSE(report.hashed);
  EXPECT_EQ(status_of(report, "hashes"), CheckStatus::kSkip);
  EXPECT_EQ(report.bytes_expected, 0U);
  EXPECT_EQ(report.bytes_present, on_disk);
}

TEST_F(SnapshotChecks, CatchesAFlippedByte) {
  std::fstream file(shard(2), std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(5000);
  file.put('\x7f');
  file.close();
  const VerifyReport report = run();
  EXPECT_EQ(status_of(report, "hashes"), CheckStatus::kFail);
  EXPECT_TRUE(has_problem(report, "model-00002-of-00004.safetensors", "sha256 mismatch"));
}

TEST_F(SnapshotChecks, FastModeSkipsHashing) {
  CheckSettings settings;
  settings.hash = false;
  const VerifyReport report = run(settings);
  EXPECT_EQ(status_of(report, "hashes"), CheckStatus::kSkip);
  EXPECT_EQ(report.bytes_hashed, 0U);
  EXPECT_FALSE(report.hashed);
  EXPECT_TRUE(report.has_listing);
}

TEST_F(SnapshotChecks, CatchesATruncatedShard) {
  std::filesystem::resize_file(shard(3), 1000);
  const VerifyReport report = run();
  EXPECT_EQ(status_of(report, "sizes"), CheckStatus::kFail);
  EXPECT_EQ(status_of(report, "safetensors_headers"), CheckStatus::kFail);
  EXPECT_TRUE(has_problem(report, "model-00003-of-00004.safetensors", "size 1000 !="));
}

TEST_F(SnapshotChecks, CatchesADeletedShard) {
  std::filesystem::remove(shard(4));
  const VerifyReport report = run();
  EXPECT_EQ(status_of(report, "completeness"), CheckStatus::kFail);
  EXPECT_EQ(status_of(report, "shard_set"), CheckStatus::kFail);
  EXPECT_EQ(report.shards_present, 3U);
  EXPECT_TRUE(has_problem(report, "model-00004-of-00004.safetensors", "missing"));
}

TEST_F(SnapshotChecks, CatchesTwoSwappedShards) {
  std::filesystem::rename(shard(1), snapshot_.root / "tmp");
  std::filesystem::rename(shard(2), shard(1));
  std::filesystem::rename(snapshot_.root / "tmp", shard(2));
  const VerifyReport report = run();
  EXPECT_FALSE(report.ok());
  EXPECT_TRUE(has_problem(report, "model-00001-of-00004.safetensors", "is mapped to this shard"));
}

TEST_F(SnapshotChecks, CatchesAStrayShard) {
  std::filesystem::copy_file(shard(1), snapshot_.root / "model-00005-of-00005.safetensors");
  const VerifyReport report = run();
  EXPECT_EQ(status_of(report, "shard_set"), CheckStatus::kFail);
  EXPECT_TRUE(has_problem(report, "model-00005-of-00005.safetensors", "stray shard"));
}

TEST_F(SnapshotChecks, CatchesAnIndexNamingATensorNoShardHas) {
  std::string index = read_all(snapshot_.root / "model.safetensors.index.json");
  index.replace(index.find("\"weight_map\": {") + 15, 0,
                "\n    \"ghost.weight\": \"model-00001-of-00004.safetensors\",");
  std::ofstream(snapshot_.root / "model.safetensors.index.json", std::ios::binary | std::ios::trunc) << index;
  snapshot_.listing = listing_of(snapshot_.root);
  const VerifyReport report = run();
  EXPECT_EQ(status_of(report, "safetensors_headers"), CheckStatus::kFail);
  EXPECT_TRUE(has_problem(report, "model-00001-of-00004.safetensors", "'ghost.weight'"));
}

TEST_F(SnapshotChecks, CatchesAWrongTotalSize) {
  std::string index = read_all(snapshot_.root / "model.safetensors.index.json");
  const std::size_t at = index.find("372864");
  ASSERT_NE(at, std::string::npos);
  index.replace(at, 6, "372865");
  std::ofstream(snapshot_.root / "model.safetensors.index.json", std::ios::binary | std::ios::trunc) << index;
  snapshot_.listing = listing_of(snapshot_.root);
  const VerifyReport report = run();
  EXPECT_TRUE(has_problem(report, "model.safetensors.index.json", "metadata.total_size 372865"));
}

TEST_F(SnapshotChecks, CatchesAMissingTokenizer) {
  std::filesystem::remove(snapshot_.root / "tokenizer.json");
  const VerifyReport report = run();
  EXPECT_EQ(status_of(report, "tokenizer"), CheckStatus::kFail);
  EXPECT_TRUE(has_problem(report, "tokenizer.json", "missing"));
}

TEST_F(SnapshotChecks, ReportsAnExcludedTokenizerAsExcludedNotMissing) {
  std::filesystem::remove(snapshot_.root / "tokenizer.json");
  snapshot_.selected = std::set<std::string>();
  for (const RemoteFile& file : *snapshot_.listing) {
    if (file.path != "tokenizer.json") snapshot_.selected->insert(file.path);
  }
  const VerifyReport report = run();
  EXPECT_EQ(status_of(report, "tokenizer"), CheckStatus::kSkip);
  EXPECT_EQ(status_of(report, "completeness"), CheckStatus::kPass);
  EXPECT_TRUE(report.ok());
}

TEST_F(SnapshotChecks, FailsAModelWithNoTokenizerUnlessAllowed) {
  std::filesystem::remove(snapshot_.root / "tokenizer.json");
  snapshot_.listing = listing_of(snapshot_.root);
  EXPECT_EQ(status_of(run(), "tokenizer"), CheckStatus::kFail);
  CheckSettings allowed;
  allowed.allow_missing = {"tokenizer"};
  EXPECT_EQ(status_of(run(allowed), "tokenizer"), CheckStatus::kSkip);
}

TEST_F(SnapshotChecks, CatchesAMissingOrBrokenConfig) {
  std::ofstream(snapshot_.root / "config.json", std::ios::trunc) << "{ not json";
  snapshot_.listing = listing_of(snapshot_.root);
  EXPECT_EQ(status_of(run(), "config"), CheckStatus::kFail);
  std::filesystem::remove(snapshot_.root / "config.json");
  const VerifyReport report = run();
  EXPECT_EQ(status_of(report, "config"), CheckStatus::kFail);
  EXPECT_TRUE(has_problem(report, "config.json", "missing"));
}

TEST_F(SnapshotChecks, ReadsConfigAsAStreamAndRefusesNestingPythonCannotLoad) {
  std::ofstream(snapshot_.root / "config.json", std::ios::trunc)
      << R"({"model_type": "llama", "x": )" << std::string(900, '[') << std::string(900, ']') << "}";
  snapshot_.listing = listing_of(snapshot_.root);
  EXPECT_EQ(status_of(run(), "config"), CheckStatus::kPass);
  std::ofstream(snapshot_.root / "config.json", std::ios::trunc)
      << R"({"model_type": "llama", "x": )" << std::string(1001, '[') << std::string(1001, ']') << "}";
  snapshot_.listing = listing_of(snapshot_.root);
  const VerifyReport report = run();
  EXPECT_EQ(status_of(report, "config"), CheckStatus::kFail);
  EXPECT_TRUE(has_problem(report, "config.json", "not valid JSON"));
}

TEST_F(SnapshotChecks, SkipsModelChecksForDatasets) {
  std::filesystem::remove(snapshot_.root / "config.json");
  std::filesystem::remove(snapshot_.root / "tokenizer.json");
  snapshot_.listing = listing_of(snapshot_.root);
  snapshot_.repo_type = RepoType::kDataset;
  const VerifyReport report = run();
  EXPECT_EQ(status_of(report, "config"), CheckStatus::kSkip);
  EXPECT_EQ(status_of(report, "tokenizer"), CheckStatus::kSkip);
}

}  // namespace
}  // namespace hfget::verify
