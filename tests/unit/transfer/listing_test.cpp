// SPDX-License-Identifier: MIT
// list_repo offline: the listing a download recorded in the cache, with the same checks and selection as a
// download, and no request (there is no server here). The online path is download's own listing step, and
// runs end to end in tests/integration/test_cache_commands.py.
#include "hfget/listing.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "hfget/error.hpp"
#include "store/tree_cache.hpp"
#include "support/temp_dir.hpp"

namespace hfget {
namespace {

using test_support::TempDir;

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";

RemoteFile file(const std::string& path, std::uint64_t size) {
  RemoteFile remote;
  remote.path = path;
  remote.size = size;
  remote.blob_id = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
  return remote;
}

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

class OfflineListing : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.repo = RepoId{RepoType::kModel, "org/model"};
    options_.cache_dir = cache_.path();
    options_.offline = true;
    options_.selection.allow_empty = true;
    const std::filesystem::path repo_dir = cache_ / cache_folder_name(options_.repo);
    write_file(repo_dir / "refs" / "main", kCommit);
    write_file(repo_dir / "trees" / (kCommit + ".json"),
               store::serialize_tree_cache({file("config.json", 2), file("model-00001-of-00002.safetensors", 10),
                                            file("model-00002-of-00002.safetensors", 12)}));
  }

  TempDir cache_;
  ListOptions options_;
};

TEST_F(OfflineListing, ReadsTheRecordedCommitAndListingAndAppliesTheSelection) {
  options_.selection.include = {"*.safetensors"};
  options_.selection.exclude = {"model-00002-*"};
  const RepoListing listing = list_repo(options_, {});
  EXPECT_TRUE(listing.offline);
  EXPECT_EQ(listing.commit, kCommit);
  EXPECT_EQ(listing.files.size(), 3u);
  ASSERT_EQ(listing.selected.size(), 1u);
  EXPECT_EQ(listing.selected[0].path, "model-00001-of-00002.safetensors");
  ASSERT_EQ(listing.shard_sets.size(), 1u);
  EXPECT_EQ(listing.shard_sets[0].in_repo, 2u);
  EXPECT_EQ(listing.shard_sets[0].selected, 1u);
}

TEST_F(OfflineListing, AFullCommitIdNeedsNoRef) {
  std::filesystem::remove(cache_ / cache_folder_name(options_.repo) / "refs" / "main");
  options_.revision = kCommit;
  EXPECT_EQ(list_repo(options_, {}).commit, kCommit);
}

TEST_F(OfflineListing, ARevisionNeverRecordedFailsAsANetworkErrorNamingTheCache) {
  options_.revision = "v2";
  try {
    list_repo(options_, {});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kNetwork);
    EXPECT_NE(std::string(error.what()).find(cache_.path().string()), std::string::npos) << error.what();
  }
}

TEST_F(OfflineListing, AnUnsafeRevisionIsAUsageError) {
  options_.revision = "../../etc";
  try {
    list_repo(options_, {});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kUsage);
  }
}

TEST_F(OfflineListing, ARecordedListingIsCheckedAsForADownload) {
  write_file(cache_ / cache_folder_name(options_.repo) / "trees" / (kCommit + ".json"),
             store::serialize_tree_cache({file(".cache/huggingface/download/x.metadata", 1), file("config.json", 2)}));
  const RepoListing listing = list_repo(options_, {});
  ASSERT_EQ(listing.files.size(), 1u);  // the reserved metadata path is never listed, as for a download
  EXPECT_EQ(listing.files[0].path, "config.json");
}

}  // namespace
}  // namespace hfget
