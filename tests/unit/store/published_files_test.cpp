// SPDX-License-Identifier: MIT
#include "store/published_files.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "support/temp_dir.hpp"

namespace hfget::store {
namespace {

using test_support::TempDir;

void write(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// File times move in steps of a kernel tick (a few ms): a change made within the same tick as the record
// would carry the same times. No real writer comes after hfget that fast.
void let_the_clock_tick() {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

TEST(PublishedFiles, VouchesForTheRecordedFileUnchangedAndAcrossRuns) {
  const TempDir dir;
  write(dir / "a.bin", "bytes");
  PublishedFiles(dir.path()).record("a.bin", "etag-a", dir / "a.bin");
  const PublishedFiles next_run(dir.path());
  EXPECT_TRUE(next_run.vouches_for("a.bin", "etag-a", dir / "a.bin"));
  EXPECT_FALSE(next_run.vouches_for("a.bin", "another-etag", dir / "a.bin"));
  EXPECT_FALSE(next_run.vouches_for("b.bin", "etag-a", dir / "a.bin"));
}

TEST(PublishedFiles, ARewrittenOrReplacedFileIsNotVouchedFor) {
  const TempDir dir;
  write(dir / "a.bin", "bytes");
  PublishedFiles published(dir.path());
  published.record("a.bin", "etag-a", dir / "a.bin");
  const auto mtime = std::filesystem::last_write_time(dir / "a.bin");
  let_the_clock_tick();
  write(dir / "a.bin", "BYTES");                           // same size, same inode
  std::filesystem::last_write_time(dir / "a.bin", mtime);  // even with the mtime put back: ctime moved
  EXPECT_FALSE(published.vouches_for("a.bin", "etag-a", dir / "a.bin"));
  published.record("a.bin", "etag-a", dir / "a.bin");
  let_the_clock_tick();
  std::filesystem::remove(dir / "a.bin");
  write(dir / "a.bin", "BYTES");  // another file (perhaps the same inode number, reused: then other times)
  EXPECT_FALSE(PublishedFiles(dir.path()).vouches_for("a.bin", "etag-a", dir / "a.bin"));
}

TEST(PublishedFiles, FindsThePathsWhoseLastRecordNamesAnEtag) {
  const TempDir dir;
  write(dir / "a.bin", "bytes");
  PublishedFiles(dir.path()).record("b/copy.bin", "etag-a", dir / "a.bin");
  PublishedFiles(dir.path()).record("a.bin", "etag-a", dir / "a.bin");
  PublishedFiles(dir.path()).record("moved-on.bin", "etag-a", dir / "a.bin");
  PublishedFiles(dir.path()).record("moved-on.bin", "etag-b", dir / "a.bin");
  const PublishedFiles published(dir.path());
  EXPECT_EQ(published.paths_with_etag("etag-a"), (std::vector<std::string>{"a.bin", "b/copy.bin"}));
  EXPECT_EQ(published.paths_with_etag("etag-b"), std::vector<std::string>{"moved-on.bin"});
  EXPECT_TRUE(published.paths_with_etag("etag-c").empty());
}

TEST(PublishedFiles, APathRecordedAgainInTheSameRunMovesToItsNewEtag) {
  const TempDir dir;
  write(dir / "a.bin", "bytes");
  PublishedFiles published(dir.path());
  published.record("x.bin", "etag-a", dir / "a.bin");
  published.record("y.bin", "etag-a", dir / "a.bin");
  published.record("x.bin", "etag-b", dir / "a.bin");
  EXPECT_EQ(published.paths_with_etag("etag-a"), std::vector<std::string>{"y.bin"});
  EXPECT_EQ(published.paths_with_etag("etag-b"), std::vector<std::string>{"x.bin"});
  published.record("y.bin", "etag-b", dir / "a.bin");
  EXPECT_TRUE(published.paths_with_etag("etag-a").empty());
  EXPECT_EQ(published.paths_with_etag("etag-b"), (std::vector<std::string>{"x.bin", "y.bin"}));
  EXPECT_EQ(PublishedFiles(dir.path()).paths_with_etag("etag-b"), (std::vector<std::string>{"x.bin", "y.bin"}));
}

TEST(PublishedFiles, TheLastLineOfAPathWinsAndBrokenLinesAreIgnored) {
  const TempDir dir;
  write(dir / "a.bin", "bytes");
  PublishedFiles(dir.path()).record("a.bin", "old-etag", dir / "a.bin");
  PublishedFiles(dir.path()).record("a.bin", "new-etag", dir / "a.bin");
  std::ofstream(dir / "published.jsonl", std::ios::app) << "{\"path\": \"a.bin\", \"etag\": \"torn";  // a crash
  const PublishedFiles published(dir.path());
  EXPECT_TRUE(published.vouches_for("a.bin", "new-etag", dir / "a.bin"));
  EXPECT_FALSE(published.vouches_for("a.bin", "old-etag", dir / "a.bin"));
}

TEST(PublishedFiles, NothingIsVouchedForWithoutARecordOrForASymlink) {
  const TempDir dir;
  write(dir / "a.bin", "bytes");
  EXPECT_FALSE(PublishedFiles(dir.path()).vouches_for("a.bin", "etag-a", dir / "a.bin"));
  PublishedFiles published(dir.path());
  published.record("a.bin", "etag-a", dir / "a.bin");
  std::filesystem::rename(dir / "a.bin", dir / "real.bin");
  std::filesystem::create_symlink("real.bin", dir / "a.bin");
  EXPECT_FALSE(published.vouches_for("a.bin", "etag-a", dir / "a.bin"));
}

}  // namespace
}  // namespace hfget::store
