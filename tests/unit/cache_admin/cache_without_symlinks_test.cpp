// SPDX-License-Identifier: MIT
// `cache ls` and `cache rm` on snapshots whose files are real files (HF_HUB_DISABLE_SYMLINKS, or a filesystem
// without symlinks), read as huggingface_hub's scan_cache_dir and delete_revisions read them: a real file is
// its own blob (Path.resolve() of it is itself), counted in its revision's size, and removed with its
// snapshot folder; blobs/ may hold nothing at all.
#include <gtest/gtest.h>

#include "cache_admin/cache_fixture.hpp"
#include "hfget/cache.hpp"
#include "support/temp_dir.hpp"

namespace hfget {
namespace {

using test_support::FakeCacheRepo;
using test_support::kCommitA;
using test_support::kCommitB;
using test_support::TempDir;
using test_support::write_file;

const RepoId kRepo{RepoType::kModel, "org/name"};

// Revision A holds copies only (blobs/ has none of them); B links one shared blob and holds a copy of the
// content A also has, as the Python client leaves a cache where symlinks stopped working between two runs.
struct MixedCache {
  TempDir dir;
  std::filesystem::path cache = dir / "cache";
  FakeCacheRepo repo{cache, "models--org--name"};

  MixedCache() {
    write_file(repo.root() / "snapshots" / kCommitA / "model.safetensors", std::string(1000, 'm'));
    write_file(repo.root() / "snapshots" / kCommitA / "sub" / "config.json", std::string(10, 'c'));
    repo.blob("linked", std::string(100, 'l')).link(kCommitB, "tokenizer.json", "linked");
    write_file(repo.root() / "snapshots" / kCommitB / "model.safetensors", std::string(1000, 'm'));
    repo.ref("main", kCommitB).ref("old", kCommitA);
  }
};

TEST(CacheWithoutSymlinks, ScanCountsEveryCopyAsItsOwnFile) {
  MixedCache fixture;
  const CacheScan scan = scan_cache(fixture.cache);
  ASSERT_TRUE(scan.warnings.empty()) << scan.warnings.front().message;
  ASSERT_EQ(scan.repos.size(), 1U);
  const CachedRepo& repo = scan.repos.front();
  // The two copies of the same bytes are two files on disk: counted twice, as scan_cache_dir does.
  EXPECT_EQ(repo.file_count, 4U);
  EXPECT_EQ(repo.size_on_disk, 1000U + 10U + 100U + 1000U);
  ASSERT_EQ(repo.revisions.size(), 2U);
  EXPECT_EQ(repo.revisions[0].commit, kCommitA);
  EXPECT_EQ(repo.revisions[0].file_count, 2U);
  EXPECT_EQ(repo.revisions[0].size_on_disk, 1010U);
  EXPECT_EQ(repo.revisions[0].refs, std::vector<std::string>{"old"});
  EXPECT_EQ(repo.revisions[1].file_count, 2U);
  EXPECT_EQ(repo.revisions[1].size_on_disk, 1100U);
}

TEST(CacheWithoutSymlinks, RemovingARevisionOfCopiesFreesTheirBytesAndNoBlob) {
  MixedCache fixture;
  const CacheRemovalPlan planned = plan_cache_removal(fixture.cache, kRepo, kCommitA);
  EXPECT_FALSE(planned.whole_repo);
  EXPECT_EQ(planned.blob_count, 0U);  // the copies go with their snapshot folder; the linked blob is B's
  EXPECT_EQ(planned.bytes_freed, 1010U + kCommitA.size());  // both copies and refs/old (A)
  const CacheRemovalPlan done = remove_from_cache(fixture.cache, kRepo, kCommitA);
  EXPECT_EQ(done.bytes_freed, planned.bytes_freed);
  const std::filesystem::path root = fixture.repo.root();
  EXPECT_FALSE(std::filesystem::exists(root / "snapshots" / kCommitA));
  EXPECT_TRUE(std::filesystem::exists(root / "blobs" / "linked"));
  EXPECT_EQ(std::filesystem::file_size(root / "snapshots" / kCommitB / "model.safetensors"), 1000U);
  const CacheScan scan = scan_cache(fixture.cache);
  EXPECT_TRUE(scan.warnings.empty()) << scan.warnings.front().message;
}

TEST(CacheWithoutSymlinks, RemovingTheLinkingRevisionTakesItsBlobAndLeavesTheOthersCopies) {
  MixedCache fixture;
  const CacheRemovalPlan done = remove_from_cache(fixture.cache, kRepo, kCommitB);
  EXPECT_EQ(done.blob_count, 1U);
  EXPECT_EQ(done.bytes_freed, 100U + 1000U + kCommitB.size());  // blob, copy, refs/main (B)
  const std::filesystem::path root = fixture.repo.root();
  EXPECT_FALSE(std::filesystem::exists(root / "blobs" / "linked"));
  EXPECT_EQ(std::filesystem::file_size(root / "snapshots" / kCommitA / "model.safetensors"), 1000U);
  EXPECT_EQ(std::filesystem::file_size(root / "snapshots" / kCommitA / "sub" / "config.json"), 10U);
}

}  // namespace
}  // namespace hfget
