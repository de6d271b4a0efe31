// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>

#include "hfget/error.hpp"
#include "store/layout.hpp"
#include "store/published_files.hpp"
#include "store/tree_cache.hpp"
#include "support/temp_dir.hpp"
#include "util/process_owner.hpp"

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

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

RemoteFile regular(const std::string& path, std::string_view content, const std::string& blob_id) {
  RemoteFile file;
  file.path = path;
  file.size = content.size();
  file.blob_id = blob_id;
  return file;
}

class LocalDirLayoutTest : public ::testing::Test {
 protected:
  LocalDirLayoutTest() {
    weights_.lfs_sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    weights_.lfs_size = weights_.size;
  }

  // Prepares for downloading every file of the snapshot.
  void prepare(const std::string& revision) { layout_->prepare(snapshot_, snapshot_.files, revision); }

  void publish(const RemoteFile& file, std::string_view content) {
    PartialFile partial = layout_->open_partial(file);
    partial.append(std::as_bytes(std::span(content.data(), content.size())));
    layout_->publish(file, std::move(partial));
  }

  std::filesystem::path metadata_root() const { return dir_ / ".cache" / "huggingface"; }
  std::filesystem::path metadata_of(const RemoteFile& file) const {
    return metadata_root() / "download" / (file.path + ".metadata");
  }

  TempDir dir_;
  RemoteFile config_ = regular("config.json", "hello\n", "ce013625030ba8dba906f756967f9e9ca394464a");
  RemoteFile weights_ = regular("x/y/a.bin", "abc", "2222222222222222222222222222222222222222");
  Snapshot snapshot_{kCommit, {config_, weights_}};
  std::unique_ptr<Layout> layout_ = make_local_dir_layout(dir_.path(), kCommit);
};

TEST_F(LocalDirLayoutTest, FindsContentOnlyAtSafePathsThatLeadThroughNoLink) {
  prepare("main");
  publish(weights_, "abc");
  const std::string sha256 = *weights_.lfs_sha256;
  EXPECT_EQ(layout_->find_content(sha256, 3), dir_.path() / "x/y/a.bin");
  EXPECT_EQ(layout_->find_content(sha256, 4), std::nullopt) << "another size";
  // published.jsonl is a file in the target: edited, it could name the same content through a link, or
  // outside the target. Neither is a source; the real path, now recorded for other content, is none either.
  TempDir outside;
  std::ofstream(outside.path() / "secret", std::ios::binary) << "abc";
  std::filesystem::create_directory_symlink(dir_.path() / "x", dir_.path() / "link");
  {
    PublishedFiles published(layout_->state_dir());
    published.record("link/y/a.bin", sha256, dir_.path() / "link/y/a.bin");
    published.record("../" + outside.path().filename().string() + "/secret", sha256, outside.path() / "secret");
    published.record("x/y/a.bin", std::string(64, '0'), dir_.path() / "x/y/a.bin");
  }
  const std::unique_ptr<Layout> reread = make_local_dir_layout(dir_.path(), kCommit);
  EXPECT_EQ(reread->find_content(sha256, 3), std::nullopt);
}

TEST_F(LocalDirLayoutTest, SnapshotPathIsTheLocalDirItself) {
  EXPECT_EQ(layout_->snapshot_path(), std::filesystem::canonical(dir_.path()));
}

TEST_F(LocalDirLayoutTest, PrepareWritesMarkersAndTheTreeCache) {
  prepare("main");
  EXPECT_EQ(read_file(metadata_root() / ".gitignore"), "*");
  EXPECT_EQ(read_file(metadata_root() / "CACHEDIR.TAG"), kCacheDirTag);
  EXPECT_EQ(read_file(metadata_root() / "trees" / (kCommit + ".json")), serialize_tree_cache(snapshot_.files));
  EXPECT_TRUE(std::filesystem::is_directory(metadata_root() / "download"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "refs"));
}

TEST_F(LocalDirLayoutTest, PrepareCreatesAMissingLocalDir) {
  const std::unique_ptr<Layout> nested = make_local_dir_layout(dir_ / "a" / "b", kCommit);
  nested->prepare(snapshot_, snapshot_.files, "main");
  EXPECT_TRUE(std::filesystem::is_regular_file(dir_ / "a" / "b" / ".cache" / "huggingface" / ".gitignore"));
}

TEST_F(LocalDirLayoutTest, RecordsTheCommitAndListing) {
  prepare("main");
  EXPECT_EQ(recorded_commit_in_local_dir(dir_.path()), kCommit);
  const std::optional<std::vector<RemoteFile>> listing = recorded_listing_in_local_dir(dir_.path(), kCommit);
  ASSERT_TRUE(listing);
  EXPECT_EQ(listing->size(), 2U);
}

TEST_F(LocalDirLayoutTest, RecordedCommitIsAmbiguousWithTwoTrees) {
  prepare("main");
  make_local_dir_layout(dir_.path(), kOtherCommit)->prepare(Snapshot{kOtherCommit, {}}, {}, "v2");
  EXPECT_EQ(recorded_commit_in_local_dir(dir_.path()), std::nullopt);
}

TEST_F(LocalDirLayoutTest, RecordedCommitIsNulloptInAFreshDir) {
  EXPECT_EQ(recorded_commit_in_local_dir(dir_.path()), std::nullopt);
  EXPECT_EQ(recorded_listing_in_local_dir(dir_.path(), kCommit), std::nullopt);
}

TEST_F(LocalDirLayoutTest, PublishWritesARealFileAndItsMetadata) {
  prepare("main");
  const double before = now_seconds();
  publish(weights_, "abc");
  const std::filesystem::path final_path = dir_ / "x" / "y" / "a.bin";
  EXPECT_FALSE(std::filesystem::is_symlink(final_path));
  EXPECT_EQ(read_file(final_path), "abc");
  EXPECT_FALSE(std::filesystem::exists(layout_->partial_path(weights_)));

  const std::string metadata = read_file(metadata_of(weights_));
  ASSERT_FALSE(metadata.empty());
  EXPECT_EQ(metadata.back(), '\n');
  const std::vector<std::string> lines = lines_of(metadata);
  ASSERT_EQ(lines.size(), 3U) << metadata;
  EXPECT_EQ(lines[0], kCommit);
  EXPECT_EQ(lines[1], weights_.etag());
  EXPECT_EQ(lines[1], *weights_.lfs_sha256);
  std::size_t parsed = 0;
  const double timestamp = std::stod(lines[2], &parsed);
  EXPECT_EQ(parsed, lines[2].size()) << lines[2];
  EXPECT_NE(lines[2].find('.'), std::string::npos) << "Python writes a float: " << lines[2];
  EXPECT_GE(timestamp, before - 1.0);
  EXPECT_LE(timestamp, now_seconds() + 1.0);
}

TEST_F(LocalDirLayoutTest, PublishUsesTheBlobIdAsEtagForRegularFiles) {
  prepare("main");
  publish(config_, "hello\n");
  const std::vector<std::string> lines = lines_of(read_file(metadata_of(config_)));
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[1], config_.blob_id);
}

TEST_F(LocalDirLayoutTest, IsCompleteAfterPublish) {
  prepare("main");
  EXPECT_FALSE(layout_->is_complete(config_));
  publish(config_, "hello\n");
  EXPECT_TRUE(layout_->is_complete(config_));
}

TEST_F(LocalDirLayoutTest, IsNotCompleteWhenTheSizeDiffers) {
  prepare("main");
  publish(config_, "hello\n");
  RemoteFile bigger = config_;
  bigger.size += 1;
  EXPECT_FALSE(layout_->is_complete(bigger));
}

TEST_F(LocalDirLayoutTest, IsNotCompleteWhenTheMetadataEtagDiffers) {
  prepare("main");
  publish(config_, "hello\n");
  RemoteFile changed = config_;
  changed.blob_id = "4444444444444444444444444444444444444444";
  EXPECT_FALSE(layout_->is_complete(changed));
}

TEST_F(LocalDirLayoutTest, IsNotCompleteWithoutMetadata) {
  prepare("main");
  publish(config_, "hello\n");
  std::filesystem::remove(metadata_of(config_));
  EXPECT_FALSE(layout_->is_complete(config_));
}

TEST_F(LocalDirLayoutTest, IsNotCompleteWithUnreadableMetadata) {
  prepare("main");
  publish(config_, "hello\n");
  std::ofstream(metadata_of(config_), std::ios::trunc) << kCommit << "\n" << config_.blob_id << "\nnot-a-number\n";
  EXPECT_FALSE(layout_->is_complete(config_));
  std::ofstream(metadata_of(config_), std::ios::trunc) << kCommit << "\n";
  EXPECT_FALSE(layout_->is_complete(config_));
}

TEST_F(LocalDirLayoutTest, IsNotCompleteWhenTheFileWasModifiedAfterTheMetadata) {
  prepare("main");
  publish(config_, "hello\n");
  const std::filesystem::path final_path = dir_ / "config.json";
  std::ofstream(final_path, std::ios::binary | std::ios::trunc) << "HELLO\n";  // same size, edited by the user
  std::filesystem::last_write_time(final_path, std::filesystem::file_time_type::clock::now() + std::chrono::hours(1));
  EXPECT_FALSE(layout_->is_complete(config_));
}

TEST_F(LocalDirLayoutTest, ToleratesOneSecondOfMtimeSkew) {
  prepare("main");
  publish(config_, "hello\n");
  const std::vector<std::string> lines = lines_of(read_file(metadata_of(config_)));
  ASSERT_EQ(lines.size(), 3U);
  std::filesystem::last_write_time(dir_ / "config.json", std::filesystem::file_time_type::clock::now());
  ASSERT_TRUE(layout_->adopt_unrecorded(config_, {}));  // touched: hashed again and recorded as it is now
  std::ofstream(metadata_of(config_), std::ios::trunc) << kCommit << "\n"
                                                       << config_.blob_id << "\n"
                                                       << std::fixed << (now_seconds() - 0.5) << "\n";
  EXPECT_TRUE(layout_->is_complete(config_));
}

TEST_F(LocalDirLayoutTest, MetadataAloneDoesNotVouchForAFile) {
  prepare("main");
  publish(config_, "hello\n");
  // Another writer (once: a hostile listing) replaces the file and writes metadata with the genuine etag
  // and a fresh timestamp: by the Python client's rule the file would be up to date. (After a clock tick:
  // file times move in steps of a few ms.)
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::filesystem::remove(dir_ / "config.json");
  std::ofstream(dir_ / "config.json", std::ios::binary) << "HELLO\n";
  std::ofstream(metadata_of(config_), std::ios::trunc) << kCommit << "\n"
                                                       << config_.blob_id << "\n"
                                                       << std::fixed << (now_seconds() + 10) << "\n";
  EXPECT_FALSE(layout_->is_complete(config_));
  EXPECT_FALSE(layout_->adopt_unrecorded(config_, {}));  // hashed: not the listed bytes
}

TEST_F(LocalDirLayoutTest, AFileWithTheListedBytesIsAdoptedOnceThenTrusted) {
  prepare("main");
  std::ofstream(dir_ / "config.json", std::ios::binary) << "hello\n";  // put there by `hf download`, say
  std::ofstream(metadata_of(config_), std::ios::trunc) << kCommit << "\n"
                                                       << config_.blob_id << "\n"
                                                       << std::fixed << (now_seconds() + 10) << "\n";
  EXPECT_FALSE(layout_->is_complete(config_));
  EXPECT_TRUE(layout_->adopt_unrecorded(config_, {}));
  EXPECT_TRUE(layout_->is_complete(config_));
  // A fresh layout (the next run) reads hfget's record of it.
  EXPECT_TRUE(make_local_dir_layout(dir_.path(), kCommit)->is_complete(config_));
}

TEST_F(LocalDirLayoutTest, AdoptingStopsWhenAskedTo) {
  prepare("main");
  std::ofstream(dir_ / "config.json", std::ios::binary) << "hello\n";
  std::stop_source stop;
  stop.request_stop();
  try {
    layout_->adopt_unrecorded(config_, stop.get_token());
    FAIL() << "expected kInterrupted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInterrupted);
  }
}

TEST_F(LocalDirLayoutTest, IsNotCompleteWhenTheFileIsASymlink) {
  prepare("main");
  publish(config_, "hello\n");
  std::filesystem::rename(dir_ / "config.json", dir_ / "real.json");
  std::filesystem::create_symlink("real.json", dir_ / "config.json");
  EXPECT_FALSE(layout_->is_complete(config_));
}

TEST_F(LocalDirLayoutTest, LinkExistingRecordsTheNewCommit) {
  prepare("main");
  publish(config_, "hello\n");
  const std::unique_ptr<Layout> next = make_local_dir_layout(dir_.path(), kOtherCommit);
  next->link_existing(config_);
  const std::vector<std::string> lines = lines_of(read_file(metadata_of(config_)));
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[0], kOtherCommit);
  EXPECT_EQ(lines[1], config_.blob_id);
  EXPECT_TRUE(next->is_complete(config_));
}

TEST_F(LocalDirLayoutTest, PartialLivesInTheDownloadFolderAndIsNeverIncomplete) {
  prepare("main");
  const std::filesystem::path partial = layout_->partial_path(weights_);
  EXPECT_EQ(partial.parent_path(), metadata_root() / "download" / "x" / "y");
  EXPECT_FALSE(std::filesystem::exists(partial.parent_path())) << "asking for the path must create nothing";
  const PartialFile opened = layout_->open_partial(weights_);
  EXPECT_EQ(opened.path().parent_path(), partial.parent_path());
  EXPECT_TRUE(opened.path().filename().string().starts_with("a.bin.ba7816bf8f01cfea."))
      << "this process's own partial file, beside the shared name";
  EXPECT_TRUE(std::filesystem::is_directory(partial.parent_path()));
  const std::string name = partial.filename().string();
  EXPECT_TRUE(name.starts_with("a.bin.")) << name;
  EXPECT_TRUE(name.ends_with(".hfget-partial")) << name;
  EXPECT_EQ(name.find(".incomplete"), std::string::npos) << name;
  EXPECT_EQ(partial.filename(), std::filesystem::path("a.bin.ba7816bf8f01cfea.hfget-partial"));
}

TEST_F(LocalDirLayoutTest, APartialOfALongFileNameLeavesRoomForTheLongestOwnerToken) {
  RemoteFile long_name = weights_;
  long_name.path = "x/" + std::string(240, 'n');  // its .metadata and .lock names still fit in 255 bytes
  const std::string shared = layout_->partial_path(long_name).filename().string();
  // What this process names after it: "<stem>.<owner>.hfget-partial" and "<stem>.<owner>.hfget-journal".
  EXPECT_LE(shared.size() + 1 + util::kMaxOwnerTokenBytes, std::size_t{NAME_MAX}) << shared;
  EXPECT_TRUE(shared.starts_with(std::string(100, 'n'))) << shared;
  EXPECT_TRUE(shared.ends_with(".ba7816bf8f01cfea.hfget-partial")) << shared;
  prepare("main");
  const PartialFile opened = layout_->open_partial(long_name);
  EXPECT_TRUE(std::filesystem::exists(opened.path()));
}

TEST_F(LocalDirLayoutTest, PartialNameChangesWithTheEtag) {
  RemoteFile changed = weights_;
  changed.lfs_sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  EXPECT_NE(layout_->partial_path(weights_), layout_->partial_path(changed));
}

TEST_F(LocalDirLayoutTest, LockPathReplacesTheMetadataSuffix) {
  EXPECT_EQ(layout_->lock_path(weights_), metadata_root() / "download" / "x" / "y" / "a.bin.lock");
  EXPECT_EQ(layout_->lock_path(config_), metadata_root() / "download" / "config.json.lock");
}

}  // namespace
}  // namespace hfget::store
