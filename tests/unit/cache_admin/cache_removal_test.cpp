// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <stop_token>

#include "cache_admin/cache_fixture.hpp"
#include "hfget/cache.hpp"
#include "hfget/error.hpp"
#include "store/download_record.hpp"
#include "store/target_lock.hpp"
#include "support/temp_dir.hpp"

namespace hfget {
namespace {

using test_support::FakeCacheRepo;
using test_support::kCommitA;
using test_support::kCommitB;
using test_support::kCommitC;
using test_support::TempDir;
using test_support::tree_listing;
using test_support::write_file;

const RepoId kRepo{RepoType::kModel, "org/name"};

// A cache with the repo under test (two revisions sharing one blob), a sibling repo, .locks/ and a file
// outside the cache that a snapshot symlink points at.
struct CacheWithTwoRevisions {
  TempDir dir;
  std::filesystem::path cache = dir / "cache";
  std::filesystem::path outside = dir / "outside.bin";
  FakeCacheRepo repo{cache, "models--org--name"};

  CacheWithTwoRevisions() {
    repo.blob("shared", std::string(1000, 's'))
        .blob("only-a", std::string(10, 'a'))
        .blob("only-b", std::string(100, 'b'))
        .link(kCommitA, "model.safetensors", "shared")
        .link(kCommitA, "config.json", "only-a")
        .link(kCommitB, "model.safetensors", "shared")
        .link(kCommitB, "nested/config.json", "only-b")
        .ref("main", kCommitB)
        .ref("refs/pr/1", kCommitA);
    write_file(repo.root() / "trees" / (kCommitA + ".json"), "{}");
    write_file(repo.root() / "trees" / (kCommitB + ".json"), "{}");
    write_file(outside, std::string(7, 'o'));
    // A hostile (or hand-made) link out of the cache: removal must unlink it, never what it points to.
    std::filesystem::create_symlink(outside, repo.root() / "snapshots" / kCommitA / "escape.bin");
    FakeCacheRepo(cache, "models--org--sibling").blob("shared", "sibling").link(kCommitA, "f", "shared");
    write_file(cache / ".locks" / "models--org--name" / "shared.lock", "");
  }

  // Everything outside the repo folder, to compare before and after.
  std::map<std::string, std::uintmax_t> outside_the_repo() const {
    std::map<std::string, std::uintmax_t> listing = tree_listing(dir.path());
    std::erase_if(listing, [](const auto& entry) { return entry.first.starts_with("cache/models--org--name"); });
    return listing;
  }
};

TEST(CacheRemoval, OneRevisionFreesOnlyTheBlobsNoOtherRevisionUses) {
  CacheWithTwoRevisions fixture;
  const auto untouched = fixture.outside_the_repo();
  const CacheRemovalPlan planned = plan_cache_removal(fixture.cache, kRepo, kCommitA);
  EXPECT_FALSE(planned.whole_repo);
  EXPECT_EQ(planned.blob_count, 1u);
  EXPECT_EQ(planned.refs, std::vector<std::string>{"refs/pr/1"});

  const CacheRemovalPlan done = remove_from_cache(fixture.cache, kRepo, kCommitA);
  EXPECT_EQ(done.bytes_freed, planned.bytes_freed);
  const std::filesystem::path root = fixture.repo.root();
  EXPECT_FALSE(std::filesystem::exists(root / "snapshots" / kCommitA));
  EXPECT_FALSE(std::filesystem::exists(root / "blobs" / "only-a"));
  EXPECT_TRUE(std::filesystem::exists(root / "blobs" / "shared"));
  EXPECT_TRUE(std::filesystem::exists(root / "blobs" / "only-b"));
  EXPECT_TRUE(std::filesystem::exists(root / "snapshots" / kCommitB / "model.safetensors"));
  EXPECT_FALSE(std::filesystem::exists(root / "refs" / "refs"));  // refs/refs/pr/1 and its emptied folders
  EXPECT_TRUE(std::filesystem::exists(root / "refs" / "main"));
  EXPECT_FALSE(std::filesystem::exists(root / "trees" / (kCommitA + ".json")));
  EXPECT_TRUE(std::filesystem::exists(root / "trees" / (kCommitB + ".json")));
  EXPECT_EQ(fixture.outside_the_repo(), untouched);

  const CacheScan scan = scan_cache(fixture.cache);
  EXPECT_TRUE(scan.warnings.empty()) << scan.warnings.front().message;
}

TEST(CacheRemoval, ARefNameSelectsItsCommit) {
  CacheWithTwoRevisions fixture;
  const CacheRemovalPlan plan = plan_cache_removal(fixture.cache, kRepo, std::string("main"));
  EXPECT_EQ(plan.commits, std::vector<std::string>{kCommitB});
  EXPECT_EQ(plan.refs, std::vector<std::string>{"main"});
  EXPECT_EQ(plan.blob_count, 1u);                            // only-b
  EXPECT_EQ(plan.bytes_freed, 100u + 2u + kCommitB.size());  // blob, trees json, ref
}

TEST(CacheRemoval, TheWholeRepoLeavesEverythingElseInPlace) {
  CacheWithTwoRevisions fixture;
  const auto untouched = fixture.outside_the_repo();
  const CacheRemovalPlan done = remove_from_cache(fixture.cache, kRepo, std::nullopt);
  EXPECT_TRUE(done.whole_repo);
  EXPECT_EQ(done.commits, (std::vector<std::string>{kCommitA, kCommitB}));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(fixture.repo.root())));
  EXPECT_EQ(fixture.outside_the_repo(), untouched);  // the file the escaping link named, the sibling, .locks/
}

TEST(CacheRemoval, TheLastRevisionTakesTheRepoWithIt) {
  const TempDir cache;
  FakeCacheRepo(cache.path(), "models--org--name").blob("b", "xyz").link(kCommitA, "f", "b").ref("main", kCommitA);
  const CacheRemovalPlan plan = plan_cache_removal(cache.path(), kRepo, std::string("main"));
  EXPECT_TRUE(plan.whole_repo);
  remove_from_cache(cache.path(), kRepo, std::string("main"));
  EXPECT_FALSE(std::filesystem::exists(cache / "models--org--name"));
}

TEST(CacheRemoval, RefusesAnUnknownRepoOrRevision) {
  CacheWithTwoRevisions fixture;
  try {
    plan_cache_removal(fixture.cache, RepoId{RepoType::kDataset, "org/name"}, std::nullopt);
    FAIL() << "expected kRepoNotFound";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kRepoNotFound);
  }
  try {
    plan_cache_removal(fixture.cache, kRepo, kCommitC);
    FAIL() << "expected kRevisionNotFound";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kRevisionNotFound);
    EXPECT_NE(std::string(error.what()).find("refs/pr/1"), std::string::npos) << error.what();
  }
}

TEST(CacheRemoval, RefusesARepoFolderThatIsASymlink) {
  const TempDir dir;
  FakeCacheRepo(dir.path(), "elsewhere").blob("b", "x").link(kCommitA, "f", "b");
  std::filesystem::create_directories(dir / "cache");
  std::filesystem::create_directory_symlink(dir / "elsewhere", dir / "cache" / "models--org--name");
  EXPECT_THROW(remove_from_cache(dir / "cache", kRepo, std::nullopt), Error);
  EXPECT_TRUE(std::filesystem::exists(dir / "elsewhere" / "blobs" / "b"));
}

TEST(CacheRemoval, IsRefusedAsBusyWhileADownloadHoldsTheLock) {
  CacheWithTwoRevisions fixture;
  const std::filesystem::path state_dir = store::state_dir_in_cache(fixture.cache, kRepo);
  std::filesystem::create_directories(state_dir);
  {
    const store::TargetLock download = store::TargetLock::acquire(state_dir, false, std::stop_token(), {});
    const auto before = tree_listing(fixture.repo.root());
    try {
      remove_from_cache(fixture.cache, kRepo, std::nullopt);
      FAIL() << "expected kBusy";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kBusy);
    }
    EXPECT_EQ(tree_listing(fixture.repo.root()), before);
  }
  EXPECT_NO_THROW(remove_from_cache(fixture.cache, kRepo, std::nullopt));
}

}  // namespace
}  // namespace hfget
