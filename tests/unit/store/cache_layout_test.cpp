// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "store/layout.hpp"
#include "store/tree_cache.hpp"
#include "support/temp_dir.hpp"

namespace hfget::store {
namespace {

using test_support::TempDir;

const std::string kCommit = "1111111111111111111111111111111111111111";

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

RemoteFile regular(const std::string& path, std::string_view content, const std::string& blob_id) {
  RemoteFile file;
  file.path = path;
  file.size = content.size();
  file.blob_id = blob_id;
  return file;
}

RemoteFile lfs(const std::string& path, std::string_view content, const std::string& sha256) {
  RemoteFile file = regular(path, content, "2222222222222222222222222222222222222222");
  file.lfs_sha256 = sha256;
  file.lfs_size = content.size();
  return file;
}

class CacheLayoutTest : public ::testing::Test {
 protected:
  // Prepares for downloading every file of the snapshot.
  void prepare(const std::string& revision) { layout_->prepare(snapshot_, snapshot_.files, revision); }

  void publish(const RemoteFile& file, std::string_view content) {
    PartialFile partial = layout_->open_partial(file);
    partial.append(std::as_bytes(std::span(content.data(), content.size())));
    layout_->publish(file, std::move(partial));
  }

  std::filesystem::path repo_dir() const { return cache_ / "models--org--name"; }

  TempDir cache_;
  RepoId repo_ = RepoId::parse("org/name", RepoType::kModel);
  const RemoteFile config_ = regular("config.json", "hello\n", "ce013625030ba8dba906f756967f9e9ca394464a");
  const RemoteFile weights_ =
      lfs("x/y/a.bin", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const Snapshot snapshot_{kCommit, {config_, weights_}};
  std::unique_ptr<Layout> layout_ = make_cache_layout(cache_.path(), repo_, kCommit);
};

TEST_F(CacheLayoutTest, SnapshotPathIsUnderSnapshots) {
  EXPECT_EQ(layout_->snapshot_path(), repo_dir() / "snapshots" / kCommit);
}

TEST_F(CacheLayoutTest, PrepareWritesTheCacheDirTag) {
  prepare("main");
  EXPECT_EQ(read_file(cache_ / "CACHEDIR.TAG"), kCacheDirTag);
  EXPECT_EQ(read_file(cache_ / "CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n"
            "# This file is a cache directory tag created by huggingface_hub.\n"
            "# For information about cache directory tags, see:\n"
            "#\thttps://bford.info/cachedir/\n");
}

TEST_F(CacheLayoutTest, PrepareCreatesTheRepoFolders) {
  prepare("main");
  EXPECT_TRUE(std::filesystem::is_directory(repo_dir() / "blobs"));
  EXPECT_TRUE(std::filesystem::is_directory(repo_dir() / "snapshots" / kCommit));
  EXPECT_TRUE(std::filesystem::is_directory(cache_ / ".locks" / "models--org--name"));
}

TEST_F(CacheLayoutTest, PrepareWritesTheRefWithoutNewline) {
  prepare("main");
  EXPECT_EQ(read_file(repo_dir() / "refs" / "main"), kCommit);
  EXPECT_EQ(recorded_commit_in_cache(cache_.path(), repo_, "main"), kCommit);
}

TEST_F(CacheLayoutTest, PrepareWritesAPullRequestRefUnderRefsRefs) {
  prepare("refs/pr/1");
  EXPECT_EQ(read_file(repo_dir() / "refs" / "refs" / "pr" / "1"), kCommit);
  EXPECT_EQ(recorded_commit_in_cache(cache_.path(), repo_, "refs/pr/1"), kCommit);
}

TEST_F(CacheLayoutTest, PrepareWritesNoRefWhenTheRevisionIsTheCommit) {
  prepare(kCommit);
  EXPECT_FALSE(std::filesystem::exists(repo_dir() / "refs" / kCommit));
}

TEST_F(CacheLayoutTest, PrepareOverwritesAnOutdatedRef) {
  std::filesystem::create_directories(repo_dir() / "refs");
  std::ofstream(repo_dir() / "refs" / "main") << "0000000000000000000000000000000000000000\n";
  prepare("main");
  EXPECT_EQ(read_file(repo_dir() / "refs" / "main"), kCommit);
}

TEST_F(CacheLayoutTest, PrepareWritesTheTreeCache) {
  prepare("main");
  EXPECT_EQ(read_file(repo_dir() / "trees" / (kCommit + ".json")), serialize_tree_cache(snapshot_.files));
  const std::optional<std::vector<RemoteFile>> listing = recorded_listing_in_cache(cache_.path(), repo_, kCommit);
  ASSERT_TRUE(listing);
  EXPECT_EQ(listing->size(), 2U);
}

TEST_F(CacheLayoutTest, PartialIsNamedAfterTheEtagAndIsNeverIncomplete) {
  const std::filesystem::path partial = layout_->partial_path(weights_);
  EXPECT_EQ(partial, repo_dir() / "blobs" / (weights_.etag() + ".hfget-partial"));
  EXPECT_NE(partial.extension(), ".incomplete");
  EXPECT_EQ(layout_->partial_path(config_).filename().string().find(".incomplete"), std::string::npos);
}

TEST_F(CacheLayoutTest, LockPathIsThePythonClientsLock) {
  EXPECT_EQ(layout_->lock_path(weights_), cache_ / ".locks" / "models--org--name" / (weights_.etag() + ".lock"));
}

TEST_F(CacheLayoutTest, PublishMovesTheBlobAndLinksItRelatively) {
  prepare("main");
  publish(config_, "hello\n");
  const std::filesystem::path blob = repo_dir() / "blobs" / config_.blob_id;
  const std::filesystem::path pointer = layout_->snapshot_path() / "config.json";
  EXPECT_EQ(read_file(blob), "hello\n");
  ASSERT_TRUE(std::filesystem::is_symlink(pointer));
  EXPECT_EQ(std::filesystem::read_symlink(pointer), std::filesystem::path("../../blobs") / config_.blob_id);
  EXPECT_EQ(read_file(pointer), "hello\n");
  EXPECT_FALSE(std::filesystem::exists(layout_->partial_path(config_)));
}

TEST_F(CacheLayoutTest, PublishLinksANestedPathWithOneMoreDotDotPerFolder) {
  prepare("main");
  publish(weights_, "abc");
  const std::filesystem::path pointer = layout_->snapshot_path() / "x" / "y" / "a.bin";
  ASSERT_TRUE(std::filesystem::is_symlink(pointer));
  EXPECT_EQ(std::filesystem::read_symlink(pointer), std::filesystem::path("../../../../blobs") / *weights_.lfs_sha256);
  EXPECT_EQ(read_file(pointer), "abc");
  EXPECT_FALSE(std::filesystem::exists(layout_->partial_path(weights_)));
}

TEST_F(CacheLayoutTest, IsCompleteOnlyOnceTheBlobHasTheListedSize) {
  prepare("main");
  EXPECT_FALSE(layout_->is_complete(config_));
  publish(config_, "hello\n");
  EXPECT_TRUE(layout_->is_complete(config_));
  std::ofstream(repo_dir() / "blobs" / config_.blob_id, std::ios::binary | std::ios::trunc) << "hello";
  EXPECT_FALSE(layout_->is_complete(config_));
}

TEST_F(CacheLayoutTest, APartialIsNotComplete) {
  prepare("main");
  PartialFile partial = layout_->open_partial(config_);
  partial.append(std::as_bytes(std::span("hello\n", 6)));
  EXPECT_FALSE(layout_->is_complete(config_));
}

TEST_F(CacheLayoutTest, LinkExistingRepairsAWrongSymlinkAndIsIdempotent) {
  prepare("main");
  publish(config_, "hello\n");
  const std::filesystem::path pointer = layout_->snapshot_path() / "config.json";
  std::filesystem::remove(pointer);
  std::filesystem::create_symlink("../../blobs/wrong", pointer);
  layout_->link_existing(config_);
  EXPECT_EQ(std::filesystem::read_symlink(pointer), std::filesystem::path("../../blobs") / config_.blob_id);
  layout_->link_existing(config_);
  EXPECT_EQ(read_file(pointer), "hello\n");
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(layout_->snapshot_path())) ++entries;
  EXPECT_EQ(entries, 1U);  // no temporary link left behind
}

TEST_F(CacheLayoutTest, UsesTheRepoTypeInTheFolderName) {
  const std::unique_ptr<Layout> datasets =
      make_cache_layout(cache_.path(), RepoId::parse("x/y", RepoType::kDataset), kCommit);
  EXPECT_EQ(datasets->snapshot_path(), cache_ / "datasets--x--y" / "snapshots" / kCommit);
  const std::unique_ptr<Layout> no_org =
      make_cache_layout(cache_.path(), RepoId::parse("gpt2", RepoType::kModel), kCommit);
  EXPECT_EQ(no_org->snapshot_path(), cache_ / "models--gpt2" / "snapshots" / kCommit);
}

TEST_F(CacheLayoutTest, RecordedCommitIsNulloptWithoutARef) {
  EXPECT_EQ(recorded_commit_in_cache(cache_.path(), repo_, "main"), std::nullopt);
  EXPECT_EQ(recorded_listing_in_cache(cache_.path(), repo_, kCommit), std::nullopt);
}

}  // namespace
}  // namespace hfget::store
