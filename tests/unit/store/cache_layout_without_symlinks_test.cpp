// SPDX-License-Identifier: MIT
// The cache where snapshot files are real files (HF_HUB_DISABLE_SYMLINKS, or a filesystem that refuses
// symlinks), laid out as huggingface_hub's _create_symlink does then: a new download moved into the
// snapshot, an existing blob copied.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <stop_token>
#include <string>
#include <string_view>

#include "store/layout.hpp"
#include "store/published_files.hpp"
#include "store/symlink_support.hpp"
#include "support/temp_dir.hpp"

namespace hfget::store {
namespace {

using test_support::TempDir;

const std::string kCommit = "1111111111111111111111111111111111111111";
const std::string kOtherCommit = "3333333333333333333333333333333333333333";

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

void write_file(const std::filesystem::path& path, std::string_view content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

bool is_real_file(const std::filesystem::path& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
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

class CacheWithoutSymlinksTest : public ::testing::Test {
 protected:
  std::unique_ptr<Layout> layout(SnapshotFiles files, const std::string& commit = kCommit) const {
    std::unique_ptr<Layout> made = make_cache_layout(cache_.path(), repo_, commit, files);
    made->prepare(Snapshot{commit, {config_, weights_}}, {config_, weights_}, "main");
    return made;
  }

  static void publish(Layout& layout, const RemoteFile& file, std::string_view content) {
    PartialFile partial = layout.open_partial(file);
    partial.append(std::as_bytes(std::span(content.data(), content.size())));
    layout.publish(file, std::move(partial));
  }

  std::filesystem::path repo_dir() const { return cache_ / "models--org--name"; }
  std::filesystem::path snapshot(const std::string& commit = kCommit) const {
    return repo_dir() / "snapshots" / commit;
  }

  TempDir cache_;
  RepoId repo_ = RepoId::parse("org/name", RepoType::kModel);
  // Their etags are the real hashes: adopting a copy hashes it.
  const RemoteFile config_ = regular("config.json", "hello\n", "ce013625030ba8dba906f756967f9e9ca394464a");
  const RemoteFile weights_ =
      lfs("x/y/a.bin", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
};

TEST_F(CacheWithoutSymlinksTest, PublishMovesANewDownloadIntoTheSnapshotAndKeepsNoBlob) {
  const std::unique_ptr<Layout> real_files = layout(SnapshotFiles::kRealFiles);
  publish(*real_files, config_, "hello\n");
  publish(*real_files, weights_, "abc");
  ASSERT_TRUE(is_real_file(snapshot() / "config.json"));
  ASSERT_TRUE(is_real_file(snapshot() / "x" / "y" / "a.bin"));
  EXPECT_EQ(read_file(snapshot() / "config.json"), "hello\n");
  EXPECT_EQ(read_file(snapshot() / "x" / "y" / "a.bin"), "abc");
  EXPECT_TRUE(std::filesystem::is_empty(repo_dir() / "blobs"));  // no blob, no partial, no journal
  EXPECT_TRUE(real_files->is_complete(config_));
  EXPECT_TRUE(real_files->is_complete(weights_));
}

TEST_F(CacheWithoutSymlinksTest, ACopyChangedAfterPublishingIsNoLongerComplete) {
  const std::unique_ptr<Layout> real_files = layout(SnapshotFiles::kRealFiles);
  publish(*real_files, config_, "hello\n");
  // Same size, replaced by another file (as an editor saves): only hfget's record tells. (A rewrite in place
  // within the kernel's clock tick of the publish could keep its times; a new inode cannot.)
  write_file(cache_ / "edited", "HELLO\n");
  std::filesystem::rename(cache_ / "edited", snapshot() / "config.json");
  EXPECT_FALSE(layout(SnapshotFiles::kRealFiles)->is_complete(config_));
  EXPECT_FALSE(layout(SnapshotFiles::kRealFiles)->adopt_unrecorded(config_, std::stop_token()));
}

TEST_F(CacheWithoutSymlinksTest, TheRecordSurvivesTheRunThatWroteIt) {
  publish(*layout(SnapshotFiles::kRealFiles), config_, "hello\n");
  EXPECT_TRUE(layout(SnapshotFiles::kRealFiles)->is_complete(config_));
  // Checked copies are complete however the next run links: nothing to download again.
  EXPECT_TRUE(layout(SnapshotFiles::kSymlinksWhereSupported)->is_complete(config_));
  EXPECT_FALSE(layout(SnapshotFiles::kRealFiles)->is_complete(weights_));
}

TEST_F(CacheWithoutSymlinksTest, ABlobAlreadyInBlobsIsCopiedAndStays) {
  publish(*layout(SnapshotFiles::kSymlinksWhereSupported), config_, "hello\n");  // blobs/<etag> + a link
  const std::unique_ptr<Layout> other = layout(SnapshotFiles::kRealFiles, kOtherCommit);
  ASSERT_TRUE(other->is_complete(config_));
  other->link_existing(config_);
  ASSERT_TRUE(is_real_file(snapshot(kOtherCommit) / "config.json"));
  EXPECT_EQ(read_file(snapshot(kOtherCommit) / "config.json"), "hello\n");
  EXPECT_EQ(read_file(repo_dir() / "blobs" / config_.blob_id), "hello\n");  // the first snapshot links to it
  EXPECT_TRUE(std::filesystem::is_symlink(snapshot() / "config.json"));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(snapshot(kOtherCommit))) ++entries;
  EXPECT_EQ(entries, 1U);  // no temporary left behind
}

TEST_F(CacheWithoutSymlinksTest, ARealFileReplacesAnOldSymlinkAtTheSamePath) {
  const std::unique_ptr<Layout> linked = layout(SnapshotFiles::kSymlinksWhereSupported);
  publish(*linked, config_, "hello\n");
  std::filesystem::remove(repo_dir() / "blobs" / config_.blob_id);  // the link now dangles
  const std::unique_ptr<Layout> real_files = layout(SnapshotFiles::kRealFiles);
  ASSERT_FALSE(real_files->is_complete(config_));
  ASSERT_FALSE(real_files->adopt_unrecorded(config_, std::stop_token()));
  publish(*real_files, config_, "hello\n");
  ASSERT_TRUE(is_real_file(snapshot() / "config.json"));
  EXPECT_EQ(read_file(snapshot() / "config.json"), "hello\n");
}

TEST_F(CacheWithoutSymlinksTest, AnUnrecordedCopyIsHashedOnceThenTrusted) {
  // As the Python client leaves it with HF_HUB_DISABLE_SYMLINKS=1: a real file, no blob, no record of ours.
  write_file(snapshot() / "x" / "y" / "a.bin", "abc");
  const std::unique_ptr<Layout> real_files = layout(SnapshotFiles::kRealFiles);
  EXPECT_FALSE(real_files->is_complete(weights_));
  EXPECT_TRUE(real_files->adopt_unrecorded(weights_, std::stop_token()));
  EXPECT_TRUE(real_files->is_complete(weights_));
  EXPECT_TRUE(layout(SnapshotFiles::kRealFiles)->is_complete(weights_));
  EXPECT_TRUE(std::filesystem::is_empty(repo_dir() / "blobs"));
}

TEST_F(CacheWithoutSymlinksTest, AnUnrecordedCopyWithOtherBytesIsNotAdopted) {
  write_file(snapshot() / "x" / "y" / "a.bin", "abd");
  EXPECT_FALSE(layout(SnapshotFiles::kRealFiles)->adopt_unrecorded(weights_, std::stop_token()));
  write_file(snapshot() / "x" / "y" / "a.bin", "abcd");
  EXPECT_FALSE(layout(SnapshotFiles::kRealFiles)->adopt_unrecorded(weights_, std::stop_token()));
}

TEST_F(CacheWithoutSymlinksTest, ASymlinkIsNeverAdoptedAsACopy) {
  // A link to a file with the right bytes outside the cache: judged by its blob, which is missing.
  write_file(cache_ / "elsewhere", "abc");
  std::filesystem::create_directories(snapshot() / "x" / "y");
  std::filesystem::create_symlink(cache_ / "elsewhere", snapshot() / "x" / "y" / "a.bin");
  EXPECT_FALSE(layout(SnapshotFiles::kRealFiles)->adopt_unrecorded(weights_, std::stop_token()));
}

TEST_F(CacheWithoutSymlinksTest, ACheckedCopyInAnotherSnapshotIsCopiedInsteadOfDownloaded) {
  publish(*layout(SnapshotFiles::kRealFiles), weights_, "abc");
  const std::unique_ptr<Layout> other = layout(SnapshotFiles::kRealFiles, kOtherCommit);
  ASSERT_TRUE(other->is_complete(weights_));
  other->link_existing(weights_);
  ASSERT_TRUE(is_real_file(snapshot(kOtherCommit) / "x" / "y" / "a.bin"));
  EXPECT_EQ(read_file(snapshot(kOtherCommit) / "x" / "y" / "a.bin"), "abc");
  EXPECT_TRUE(layout(SnapshotFiles::kRealFiles, kOtherCommit)->is_complete(weights_));  // recorded in turn
  EXPECT_TRUE(std::filesystem::is_empty(repo_dir() / "blobs"));
}

TEST_F(CacheWithoutSymlinksTest, AChangedCopyInAnotherSnapshotIsNotASource) {
  publish(*layout(SnapshotFiles::kRealFiles), weights_, "abc");
  write_file(cache_ / "edited", "abd");
  std::filesystem::rename(cache_ / "edited", snapshot() / "x" / "y" / "a.bin");
  EXPECT_FALSE(layout(SnapshotFiles::kRealFiles, kOtherCommit)->is_complete(weights_));
}

TEST_F(CacheWithoutSymlinksTest, ARecordNamingAFileOutsideTheSnapshotsIsNeverASource) {
  // Whoever can write the cache can write the record: a line vouching for a file outside the cache (its
  // identity read with stat, which needs no read permission) must not get that file copied into a snapshot.
  layout(SnapshotFiles::kRealFiles);
  write_file(cache_ / "outside" / "secret", "abc");
  std::filesystem::create_directories(snapshot());
  std::filesystem::create_directory_symlink(cache_ / "outside", snapshot() / "escape");
  PublishedFiles record(repo_dir() / "hfget");
  record.record("snapshots/../../outside/secret", weights_.etag(), cache_ / "outside" / "secret");
  record.record("snapshots/" + kCommit + "/escape/secret", weights_.etag(), cache_ / "outside" / "secret");
  record.record("outside/secret", weights_.etag(), cache_ / "outside" / "secret");
  EXPECT_FALSE(layout(SnapshotFiles::kRealFiles, kOtherCommit)->is_complete(weights_));
}

TEST(SymlinkSupport, AnOrdinaryFolderSupportsSymlinksAndTheProbeLeavesNothing) {
  TempDir dir;
  EXPECT_TRUE(symlinks_supported_in(dir.path()));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(SymlinkSupport, RefusalsAreTheErrorsOfFilesystemsWithoutSymlinks) {
  EXPECT_TRUE(is_symlink_refusal(EPERM));   // vfat, exFAT, CIFS
  EXPECT_TRUE(is_symlink_refusal(ENOSYS));  // FUSE without the operation
  EXPECT_TRUE(is_symlink_refusal(EOPNOTSUPP));
  EXPECT_FALSE(is_symlink_refusal(ENOSPC));
  EXPECT_FALSE(is_symlink_refusal(ENOENT));
  EXPECT_FALSE(is_symlink_refusal(EEXIST));
}

}  // namespace
}  // namespace hfget::store
