// SPDX-License-Identifier: MIT
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <stop_token>
#include <thread>

#include "cache_admin/cache_fixture.hpp"
#include "hfget/cache.hpp"
#include "hfget/error.hpp"
#include "store/download_record.hpp"
#include "store/published_files.hpp"
#include "store/target_lock.hpp"
#include "support/temp_dir.hpp"

namespace hfget {
namespace {

using test_support::kCommitA;
using test_support::TempDir;
using test_support::tree_listing;
using test_support::write_file;

// What an hfget --local-dir download leaves: files, their .metadata (and .lock), trees/, hfget's record.
void downloaded(const std::filesystem::path& dir, const std::string& path, const std::string& content) {
  write_file(dir / path, content);
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::filesystem::path metadata = dir / ".cache/huggingface/download" / (path + ".metadata");
  write_file(metadata, fmt::format("{}\netag-of-{}\n{:.3f}\n", kCommitA, path, now + 5));
  write_file(std::filesystem::path(metadata).replace_extension(".lock"), "");
}

void hfget_download(const std::filesystem::path& dir, const std::vector<std::string>& paths) {
  std::filesystem::create_directories(store::state_dir_in_local_dir(dir));
  store::PublishedFiles published(store::state_dir_in_local_dir(dir));
  for (const std::string& path : paths) {
    downloaded(dir, path, "content of " + path);
    published.record(path, "etag-of-" + path, dir / path);
  }
  write_file(dir / ".cache/huggingface/.gitignore", "*");
  write_file(dir / ".cache/huggingface/CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n");
  write_file(dir / ".cache/huggingface/trees" / (kCommitA + ".json"), "{}");
  std::filesystem::create_directories(store::state_dir_in_local_dir(dir));
  store::write_download_record(store::record_path_in_local_dir(dir, kCommitA), {kCommitA, "main", paths});
  write_file(store::state_dir_in_local_dir(dir) / "state.json", "{}");
}

TEST(LocalDirRemoval, RefusesADirectoryHfgetDidNotCreate) {
  const TempDir dir;
  downloaded(dir.path(), "model.safetensors", "weights");  // `hf download` metadata, but no hfget record
  const auto before = tree_listing(dir.path());
  try {
    remove_local_dir_download(dir.path());
    FAIL() << "expected kUsage";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kUsage);
    EXPECT_NE(std::string(error.what()).find("not created by hfget"), std::string::npos);
  }
  EXPECT_EQ(tree_listing(dir.path()), before);
}

TEST(LocalDirRemoval, RemovesEverythingHfgetWroteAndTheDirectory) {
  const TempDir parent;
  const std::filesystem::path dir = parent / "model";
  write_file(parent / "sibling" / "keep.txt", "keep");
  hfget_download(dir, {"config.json", "model.safetensors", "sub/dir/tokenizer.json"});
  write_file(dir / ".cache/huggingface/download/sub/dir/tokenizer.json.0123456789abcdef.hfget-partial", "part");
  const LocalDirRemoval removal = remove_local_dir_download(dir);
  EXPECT_EQ(removal.plan.files.size(), 3u);
  EXPECT_TRUE(removal.plan.kept.empty());
  EXPECT_TRUE(removal.left.empty());
  EXPECT_TRUE(removal.directory_removed);
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_EQ(tree_listing(parent.path()),
            (std::map<std::string, std::uintmax_t>{{"sibling", 0}, {"sibling/keep.txt", 4}}));
}

TEST(LocalDirRemoval, RemovesAnInterruptedDownloadWholeWithTheLocksOfFilesThatNeverArrived) {
  const TempDir parent;
  const std::filesystem::path dir = parent / "model";
  hfget_download(dir, {"config.json", "sub/model.safetensors"});
  // Interrupted: the shard never arrived; its lock (taken before fetching) and its partial file are there.
  std::filesystem::remove(dir / "sub/model.safetensors");
  std::filesystem::remove(dir / ".cache/huggingface/download/sub/model.safetensors.metadata");
  write_file(dir / ".cache/huggingface/download/sub/model.safetensors.0123456789abcdef.hfget-partial", "part");
  const LocalDirRemoval removal = remove_local_dir_download(dir);
  EXPECT_EQ(removal.plan.files, (std::vector<std::string>{"config.json"}));
  EXPECT_TRUE(removal.left.empty()) << removal.left.front();
  EXPECT_TRUE(removal.directory_removed);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(LocalDirRemoval, KeepsFilesItDidNotWriteAndTheDirectoryHoldingThem) {
  const TempDir dir;
  hfget_download(dir.path(), {"config.json", "model.safetensors", "edited.txt", "never-arrived.bin"});
  std::filesystem::remove(dir / "never-arrived.bin");
  write_file(dir / "notes.txt", "mine");
  // Edited after the download: newer than its metadata says.
  write_file(dir / "edited.txt", "changed");
  std::filesystem::last_write_time(dir / "edited.txt",
                                   std::filesystem::file_time_type::clock::now() + std::chrono::hours(1));
  const LocalDirRemoval removal = remove_local_dir_download(dir.path());
  EXPECT_EQ(removal.plan.files, (std::vector<std::string>{"config.json", "model.safetensors"}));
  ASSERT_EQ(removal.plan.kept.size(), 1u);
  EXPECT_EQ(removal.plan.kept[0].path, "edited.txt");
  EXPECT_EQ(removal.plan.kept[0].reason, "modified after the download");
  EXPECT_FALSE(removal.directory_removed);
  // The edited file keeps its metadata; the locks hfget took, the metadata of what is not there, hfget's
  // record, trees and state are gone.
  EXPECT_EQ(removal.left,
            (std::vector<std::string>{".cache/huggingface/.gitignore", ".cache/huggingface/CACHEDIR.TAG",
                                      ".cache/huggingface/download/edited.txt.metadata", "edited.txt", "notes.txt"}));
}

TEST(LocalDirRemoval, KeepsAUsersFileThatAForgedRecordAndMetadataName) {
  const TempDir dir;
  hfget_download(dir.path(), {"config.json"});
  // What a hostile listing once could write: the user's file named in hfget's record, with fresh metadata.
  write_file(dir / "notes.txt", "the user's own notes");
  store::write_download_record(store::record_path_in_local_dir(dir.path(), kCommitA),
                               {kCommitA, "main", {"config.json", "notes.txt"}});
  downloaded(dir.path(), "notes.txt", "the user's own notes");
  const LocalDirRemoval removal = remove_local_dir_download(dir.path());
  EXPECT_EQ(removal.plan.files, (std::vector<std::string>{"config.json"}));
  ASSERT_EQ(removal.plan.kept.size(), 1u);
  EXPECT_EQ(removal.plan.kept[0].path, "notes.txt");
  EXPECT_EQ(removal.plan.kept[0].reason, "hfget has no record of checking it and no listing to check it against");
  EXPECT_TRUE(std::filesystem::exists(dir / "notes.txt"));
}

TEST(LocalDirRemoval, KeepsAFileReplacedSinceHfgetCheckedIt) {
  const TempDir dir;
  hfget_download(dir.path(), {"config.json", "model.safetensors"});
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // file times move in steps of a few ms
  std::filesystem::remove(dir / "model.safetensors");
  downloaded(dir.path(), "model.safetensors", "content of model.safetensors");  // same bytes, another inode
  const LocalDirRemoval removal = remove_local_dir_download(dir.path());
  EXPECT_EQ(removal.plan.files, (std::vector<std::string>{"config.json"}));
  ASSERT_EQ(removal.plan.kept.size(), 1u);
  EXPECT_EQ(removal.plan.kept[0].path, "model.safetensors");
}

TEST(LocalDirRemoval, NeverFollowsASymlinkedFolderOutOfTheDirectory) {
  const TempDir parent;
  const std::filesystem::path dir = parent / "model";
  write_file(parent / "outside" / "config.json", "not hfget's");
  hfget_download(dir, {"sub/config.json"});
  std::filesystem::remove_all(dir / "sub");
  std::filesystem::create_directory_symlink(parent / "outside", dir / "sub");
  const LocalDirRemoval removal = remove_local_dir_download(dir);
  EXPECT_TRUE(removal.plan.files.empty());
  EXPECT_EQ(removal.plan.kept.size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(parent / "outside" / "config.json"));
}

TEST(LocalDirRemoval, IsRefusedAsBusyWhileADownloadHoldsTheLock) {
  const TempDir dir;
  hfget_download(dir.path(), {"config.json"});
  const store::TargetLock download =
      store::TargetLock::acquire(store::state_dir_in_local_dir(dir.path()), false, std::stop_token(), {});
  const auto before = tree_listing(dir.path());
  try {
    remove_local_dir_download(dir.path());
    FAIL() << "expected kBusy";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kBusy);
  }
  EXPECT_EQ(tree_listing(dir.path()), before);
}

}  // namespace
}  // namespace hfget
