// SPDX-License-Identifier: MIT
// Target: each question a download, verify, status or rm asks of where a download lands, answered for both
// kinds (repo X in the cache under D, local dir P), with the paths huggingface_hub and hfget's own records
// use (HUB-PROTOCOL §4, §5).
#include "hfget/target.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "hfget/download.hpp"
#include "hfget/verify.hpp"
#include "store/layout.hpp"
#include "store/tree_cache.hpp"
#include "support/temp_dir.hpp"

namespace hfget {
namespace {

using test_support::TempDir;

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
const std::string kOtherCommit = "89abcdef0123456789abcdef0123456789abcdef";
const RepoId kRepo{RepoType::kDataset, "org/data"};

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

RemoteFile file(const std::string& path, std::uint64_t size) {
  RemoteFile remote;
  remote.path = path;
  remote.size = size;
  remote.blob_id = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
  return remote;
}

class TargetTest : public ::testing::Test {
 protected:
  std::filesystem::path repo_dir() const { return dir_ / "cache" / "datasets--org--data"; }
  std::filesystem::path local_dir() const { return dir_ / "local"; }
  Target cache() const { return Target::in_cache(dir_ / "cache", kRepo); }
  Target local() const { return Target::in_local_dir(local_dir(), RepoType::kDataset); }

  TempDir dir_;
};

TEST_F(TargetTest, SaysWhichKindItIsAndWhatItIsRootedAt) {
  EXPECT_TRUE(cache().is_cache());
  EXPECT_FALSE(cache().local_dir().has_value());
  EXPECT_EQ(cache().root(), dir_ / "cache");
  EXPECT_EQ(cache().repo().name, kRepo.name);
  EXPECT_EQ(cache().repo().type, kRepo.type);

  EXPECT_FALSE(local().is_cache());
  EXPECT_EQ(local().local_dir(), local_dir());
  EXPECT_EQ(local().root(), local_dir());
  EXPECT_EQ(local().repo().type, RepoType::kDataset);
  EXPECT_TRUE(local().repo().name.empty());  // a local dir does not record its repo id
}

TEST_F(TargetTest, KeepsItsStateInTheRepoFolderOrUnderTheLocalDirsMetadata) {
  EXPECT_EQ(cache().state_dir(), repo_dir() / "hfget");
  EXPECT_EQ(local().state_dir(), local_dir() / ".cache" / "huggingface" / "hfget");
  EXPECT_EQ(cache().record_path(kCommit), repo_dir() / "hfget" / (kCommit + ".json"));
  EXPECT_EQ(local().record_path(kCommit), local_dir() / ".cache" / "huggingface" / "hfget" / (kCommit + ".json"));
}

TEST_F(TargetTest, PreparesItsStateFolderAndNamesNoLockHolderWhenNoneRuns) {
  for (const Target& target : {cache(), local()}) {
    EXPECT_FALSE(std::filesystem::exists(target.root()));
    EXPECT_EQ(target.prepare_state_dir(), target.state_dir());
    EXPECT_TRUE(std::filesystem::is_directory(target.state_dir()));
    EXPECT_FALSE(target.lock_holder().has_value());
  }
}

TEST_F(TargetTest, RefusesASymlinkOnTheWayToItsStateFolder) {
  std::filesystem::create_directories(local_dir());
  std::filesystem::create_directories(dir_ / "elsewhere");
  std::filesystem::create_directory_symlink(dir_ / "elsewhere", local_dir() / ".cache");
  EXPECT_THROW(local().prepare_state_dir(), Error);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "elsewhere" / "huggingface"));
}

TEST_F(TargetTest, PutsTheSnapshotUnderSnapshotsInTheCacheAndInTheLocalDirItself) {
  EXPECT_EQ(cache().snapshot_path(kCommit), repo_dir() / "snapshots" / kCommit);
  EXPECT_EQ(local().snapshot_path(kCommit), local_dir());
  EXPECT_EQ(cache().layout(kCommit)->snapshot_path(), cache().snapshot_path(kCommit));
  EXPECT_EQ(local().layout(kCommit)->snapshot_path(), local().snapshot_path(kCommit));
}

TEST_F(TargetTest, FindsTheCommitTheCacheRecordedForTheRevision) {
  write_file(repo_dir() / "refs" / "v1", kCommit);
  EXPECT_EQ(cache().recorded_commit("v1"), kCommit);
  EXPECT_FALSE(cache().recorded_commit("main").has_value());
  EXPECT_EQ(cache().recorded_commit(kOtherCommit), kOtherCommit);  // a commit id needs no record
}

TEST_F(TargetTest, FindsTheOneCommitALocalDirRecordedWhateverTheRevision) {
  const std::filesystem::path trees = local_dir() / ".cache" / "huggingface" / "trees";
  EXPECT_FALSE(local().recorded_commit("main").has_value());
  write_file(trees / (kCommit + ".json"), store::serialize_tree_cache({file("a.txt", 1)}));
  EXPECT_EQ(local().recorded_commit("main"), kCommit);
  EXPECT_EQ(local().recorded_commit(kOtherCommit), kOtherCommit);
  write_file(trees / (kOtherCommit + ".json"), store::serialize_tree_cache({file("a.txt", 1)}));
  EXPECT_FALSE(local().recorded_commit("main").has_value());  // two commits: which one is ambiguous
}

TEST_F(TargetTest, ReadsTheListingRecordedForACommit) {
  write_file(repo_dir() / "trees" / (kCommit + ".json"), store::serialize_tree_cache({file("config.json", 2)}));
  write_file(local_dir() / ".cache" / "huggingface" / "trees" / (kCommit + ".json"),
             store::serialize_tree_cache({file("a.txt", 1), file("b.txt", 3)}));
  const std::optional<std::vector<RemoteFile>> in_cache = cache().recorded_listing(kCommit);
  ASSERT_TRUE(in_cache.has_value());
  ASSERT_EQ(in_cache->size(), 1u);
  EXPECT_EQ(in_cache->front().path, "config.json");
  const std::optional<std::vector<RemoteFile>> in_local_dir = local().recorded_listing(kCommit);
  ASSERT_TRUE(in_local_dir.has_value());
  EXPECT_EQ(in_local_dir->size(), 2u);
  EXPECT_FALSE(cache().recorded_listing(kOtherCommit).has_value());
  EXPECT_FALSE(local().recorded_listing(kOtherCommit).has_value());
}

TEST_F(TargetTest, IsMadeFromDownloadAndVerifyOptionsByWhetherALocalDirIsSet) {
  DownloadOptions download;
  download.repo = kRepo;
  download.cache_dir = dir_ / "cache";
  EXPECT_TRUE(download.target().is_cache());
  EXPECT_EQ(download.target().state_dir(), cache().state_dir());
  download.local_dir = local_dir();
  EXPECT_FALSE(download.target().is_cache());
  EXPECT_EQ(download.target().state_dir(), local().state_dir());

  VerifyOptions verify;
  verify.repo = kRepo;
  verify.cache_dir = dir_ / "cache";
  EXPECT_EQ(verify.target().snapshot_path(kCommit), cache().snapshot_path(kCommit));
  verify.local_dir = local_dir();
  EXPECT_EQ(verify.target().snapshot_path(kCommit), local_dir());
}

}  // namespace
}  // namespace hfget
