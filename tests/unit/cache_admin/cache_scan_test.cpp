// SPDX-License-Identifier: MIT
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

// The one warning of a scan, or a failure naming what was found instead.
std::string only_warning(const CacheScan& scan) {
  EXPECT_EQ(scan.warnings.size(), 1u);
  EXPECT_TRUE(scan.repos.empty());
  return scan.warnings.empty() ? "" : scan.warnings.front().message;
}

TEST(CacheScan, CountsABlobSharedByTwoRevisionsOnce) {
  const TempDir cache;
  FakeCacheRepo(cache.path(), "models--org--name")
      .blob("shared", std::string(1000, 's'))
      .blob("only-a", std::string(10, 'a'))
      .blob("only-b", std::string(100, 'b'))
      .link(kCommitA, "model.safetensors", "shared")
      .link(kCommitA, "config.json", "only-a")
      .link(kCommitB, "model.safetensors", "shared")
      .link(kCommitB, "sub/dir/config.json", "only-b")
      .ref("main", kCommitB)
      .ref("refs/pr/1", kCommitA);
  const CacheScan scan = scan_cache(cache.path());
  ASSERT_TRUE(scan.warnings.empty()) << scan.warnings.front().message;
  ASSERT_EQ(scan.repos.size(), 1u);
  const CachedRepo& repo = scan.repos.front();
  EXPECT_EQ(repo.type, RepoType::kModel);
  EXPECT_EQ(repo.repo_id, "org/name");
  EXPECT_EQ(repo.file_count, 3u);
  EXPECT_EQ(repo.size_on_disk, 1110u);
  EXPECT_EQ(scan.size_on_disk, 1110u);
  ASSERT_EQ(repo.revisions.size(), 2u);
  EXPECT_EQ(repo.revisions[0].commit, kCommitA);
  EXPECT_EQ(repo.revisions[0].refs, std::vector<std::string>{"refs/pr/1"});
  EXPECT_EQ(repo.revisions[0].size_on_disk, 1010u);
  EXPECT_EQ(repo.revisions[0].file_count, 2u);
  EXPECT_EQ(repo.revisions[1].refs, std::vector<std::string>{"main"});
  EXPECT_EQ(repo.revisions[1].size_on_disk, 1100u);
}

TEST(CacheScan, CountsTwoPathsLinkingOneBlobOnceInTheRevision) {
  const TempDir cache;
  FakeCacheRepo(cache.path(), "datasets--data")
      .blob("same", std::string(50, 'x'))
      .link(kCommitA, "a.txt", "same")
      .link(kCommitA, "b.txt", "same");
  const CacheScan scan = scan_cache(cache.path());
  ASSERT_EQ(scan.repos.size(), 1u);
  EXPECT_EQ(scan.repos[0].type, RepoType::kDataset);
  EXPECT_EQ(scan.repos[0].repo_id, "data");
  EXPECT_EQ(scan.repos[0].revisions[0].file_count, 2u);
  EXPECT_EQ(scan.repos[0].revisions[0].size_on_disk, 50u);
}

TEST(CacheScan, SkipsLocksCacheDirTagAndOsLitter) {
  const TempDir cache;
  std::filesystem::create_directories(cache / ".locks" / "models--org--name");
  write_file(cache / "CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n");
  write_file(cache / ".DS_Store", "");
  write_file(cache / "Thumbs.db", "");
  write_file(cache / "desktop.ini", "");
  FakeCacheRepo(cache.path(), "models--org--name").blob("b", "x").link(kCommitA, "f", "b");
  write_file(cache / "models--org--name" / "snapshots" / ".DS_Store", "");
  const CacheScan scan = scan_cache(cache.path());
  EXPECT_TRUE(scan.warnings.empty());
  EXPECT_EQ(scan.repos.size(), 1u);
}

TEST(CacheScan, WarnsForAnEntryThatIsNotAFolder) {
  const TempDir cache;
  write_file(cache / "models--org--name", "");
  EXPECT_NE(only_warning(scan_cache(cache.path())).find("not a directory"), std::string::npos);
}

TEST(CacheScan, WarnsForAFolderNameWithoutDoubleDash) {
  const TempDir cache;
  std::filesystem::create_directories(cache / "random-folder" / "snapshots");
  EXPECT_NE(only_warning(scan_cache(cache.path())).find("not a valid HuggingFace cache directory"), std::string::npos);
}

TEST(CacheScan, WarnsForAnUnknownRepoType) {
  const TempDir cache;
  FakeCacheRepo(cache.path(), "kernels--org--name").blob("b", "x").link(kCommitA, "f", "b");
  EXPECT_NE(only_warning(scan_cache(cache.path())).find("found `kernel`"), std::string::npos);
}

TEST(CacheScan, WarnsForAMissingSnapshotsFolder) {
  const TempDir cache;
  write_file(cache / "models--org--name" / "refs" / "main",
             kCommitA);  // what a local-dir `hf download` leaves
  EXPECT_NE(only_warning(scan_cache(cache.path())).find("Snapshots dir doesn't exist"), std::string::npos);
}

TEST(CacheScan, WarnsForRefsThatIsAFile) {
  const TempDir cache;
  FakeCacheRepo(cache.path(), "models--org--name");
  write_file(cache / "models--org--name" / "refs", kCommitA);
  EXPECT_NE(only_warning(scan_cache(cache.path())).find("Refs directory cannot be a file"), std::string::npos);
}

TEST(CacheScan, WarnsForAFileDirectlyInSnapshots) {
  const TempDir cache;
  FakeCacheRepo(cache.path(), "models--org--name");
  write_file(cache / "models--org--name" / "snapshots" / "stray.txt", "");
  EXPECT_NE(only_warning(scan_cache(cache.path())).find("Found a file"), std::string::npos);
}

TEST(CacheScan, WarnsForABrokenSymlink) {
  const TempDir cache;
  FakeCacheRepo(cache.path(), "models--org--name").link(kCommitA, "model.safetensors", "missing-blob");
  EXPECT_NE(only_warning(scan_cache(cache.path())).find("Blob missing (broken symlink)"), std::string::npos);
}

TEST(CacheScan, WarnsForARefToACommitWithoutSnapshot) {
  const TempDir cache;
  FakeCacheRepo(cache.path(), "models--org--name").blob("b", "x").link(kCommitA, "f", "b").ref("main", kCommitB);
  EXPECT_NE(only_warning(scan_cache(cache.path())).find("refer to missing commit hashes"), std::string::npos);
}

TEST(CacheScan, ReadsRefsWithoutStrippingSoATrailingNewlinePointsNowhere) {
  const TempDir cache;
  FakeCacheRepo(cache.path(), "models--org--name").blob("b", "x").link(kCommitA, "f", "b").ref("main", kCommitA + "\n");
  EXPECT_NE(only_warning(scan_cache(cache.path())).find("refer to missing commit hashes"), std::string::npos);
}

TEST(CacheScan, KeepsScanningAfterACorruptedRepo) {
  const TempDir cache;
  FakeCacheRepo(cache.path(), "models--broken").link(kCommitA, "f", "missing");
  FakeCacheRepo(cache.path(), "models--fine").blob("b", "xyz").link(kCommitA, "f", "b");
  const CacheScan scan = scan_cache(cache.path());
  ASSERT_EQ(scan.repos.size(), 1u);
  EXPECT_EQ(scan.repos[0].repo_id, "fine");
  ASSERT_EQ(scan.warnings.size(), 1u);
  EXPECT_EQ(scan.warnings[0].path, cache / "models--broken");
}

TEST(CacheScan, AMissingCacheIsAnEmptyScan) {
  const TempDir parent;
  const CacheScan scan = scan_cache(parent / "nothing-here");
  EXPECT_FALSE(scan.exists);
  EXPECT_TRUE(scan.repos.empty());
  EXPECT_TRUE(scan.warnings.empty());
}

}  // namespace
}  // namespace hfget
