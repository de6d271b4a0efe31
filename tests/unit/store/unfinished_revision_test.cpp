// SPDX-License-Identifier: MIT
#include "store/unfinished_revision.hpp"

#include <gtest/gtest.h>

#include "cache_admin/cache_fixture.hpp"
#include "hfget/cache.hpp"
#include "store/download_record.hpp"
#include "store/tree_cache.hpp"
#include "support/temp_dir.hpp"

namespace hfget::store {
namespace {

using test_support::FakeCacheRepo;
using test_support::kCommitA;
using test_support::kCommitB;
using test_support::TempDir;
using test_support::write_file;

const std::string kConfigBlob = "1111111111111111111111111111111111111111";
const std::string kReadmeBlob = "2222222222222222222222222222222222222222";
const std::string kShard1 = "3333333333333333333333333333333333333333333333333333333333333333";
const std::string kShard2 = "4444444444444444444444444444444444444444444444444444444444444444";

RemoteFile listed(const std::string& path, const std::string& etag) {
  RemoteFile file;
  file.path = path;
  file.size = 10;
  if (etag.size() == 64) {
    file.blob_id = "5555555555555555555555555555555555555555";
    file.lfs_sha256 = etag;
    file.lfs_size = 10;
  } else {
    file.blob_id = etag;
  }
  return file;
}

// A repo with the listing of commit A (config, README, two shards) and config.json downloaded.
FakeCacheRepo repo_with_listing(const TempDir& cache) {
  FakeCacheRepo repo(cache.path(), "models--org--name");
  repo.blob(kConfigBlob, "{}").link(kCommitA, "config.json", kConfigBlob).ref("main", kCommitA);
  write_file(repo.root() / "trees" / (kCommitA + ".json"),
             serialize_tree_cache({listed("README.md", kReadmeBlob), listed("config.json", kConfigBlob),
                                   listed("model-1.safetensors", kShard1), listed("model-2.safetensors", kShard2)}));
  return repo;
}

TEST(UnfinishedFiles, CountsTheSelectedFilesTheSnapshotLacksAndTheirPartialFiles) {
  const TempDir cache;
  const FakeCacheRepo repo = repo_with_listing(cache);
  std::filesystem::create_directories(repo.root() / "hfget");
  write_download_record(repo.root() / "hfget" / (kCommitA + ".json"),
                        {kCommitA, "main", {"config.json", "model-1.safetensors", "model-2.safetensors"}});
  write_file(repo.root() / "blobs" / (kShard1 + ".hfget-partial"), "part");
  write_file(repo.root() / "blobs" / (kShard2 + ".vm-12-0123abcd.hfget-partial"), "part");
  const UnfinishedFiles unfinished = unfinished_files(repo.root(), kCommitA);
  EXPECT_EQ(unfinished.missing, 2U);  // README.md was not selected
  EXPECT_EQ(unfinished.partial, 2U);
}

TEST(UnfinishedFiles, ADownloadThePythonClientStartedIsFlaggedByItsIncompleteBlob) {
  const TempDir cache;
  const FakeCacheRepo repo = repo_with_listing(cache);  // no hfget record: the selection is unknown
  write_file(repo.root() / "blobs" / (kShard2 + ".incomplete"), "part");
  const UnfinishedFiles unfinished = unfinished_files(repo.root(), kCommitA);
  EXPECT_EQ(unfinished.missing, 1U);
  EXPECT_EQ(unfinished.partial, 1U);
}

TEST(UnfinishedFiles, AFinishedDownloadIsNotFlagged) {
  const TempDir cache;
  const FakeCacheRepo repo = repo_with_listing(cache);
  std::filesystem::create_directories(repo.root() / "hfget");
  write_download_record(repo.root() / "hfget" / (kCommitA + ".json"), {kCommitA, "main", {"config.json"}});
  const UnfinishedFiles unfinished = unfinished_files(repo.root(), kCommitA);
  EXPECT_EQ(unfinished.missing, 0U);
  EXPECT_EQ(unfinished.partial, 0U);
  EXPECT_EQ(unfinished_files(repo.root(), kCommitB).missing, 0U) << "a revision with no record and no listing";
}

TEST(UnfinishedFiles, CacheLsMarksTheRevisionIncomplete) {
  const TempDir cache;
  const FakeCacheRepo repo = repo_with_listing(cache);
  std::filesystem::create_directories(repo.root() / "hfget");
  write_download_record(repo.root() / "hfget" / (kCommitA + ".json"),
                        {kCommitA, "main", {"config.json", "model-1.safetensors"}});
  write_file(repo.root() / "blobs" / (kShard1 + ".hfget-partial"), "part");
  const CacheScan scan = scan_cache(cache.path());
  ASSERT_EQ(scan.repos.size(), 1U);
  ASSERT_EQ(scan.repos.front().revisions.size(), 1U);
  const CachedRevision& revision = scan.repos.front().revisions.front();
  EXPECT_TRUE(revision.incomplete());
  EXPECT_EQ(revision.files_missing, 1U);
  EXPECT_EQ(revision.partial_files, 1U);
  EXPECT_EQ(revision.file_count, 1U);
}

}  // namespace
}  // namespace hfget::store
