// SPDX-License-Identifier: MIT
#include "store/partial_file.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "hfget/error.hpp"
#include "support/temp_dir.hpp"

namespace hfget::store {
namespace {

using test_support::TempDir;

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

std::string existing_bytes(const PartialFile& partial) {
  std::string out;
  partial.read_existing(
      [&](std::span<const std::byte> bytes) { out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size()); });
  return out;
}

TEST(PartialFile, OpenCreatesAnEmptyFile) {
  const TempDir dir;
  const PartialFile partial = PartialFile::open(dir / "f.part");
  EXPECT_EQ(partial.size(), 0U);
  EXPECT_EQ(partial.path(), dir / "f.part");
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "f.part"));
}

TEST(PartialFile, AppendGrowsTheFile) {
  const TempDir dir;
  PartialFile partial = PartialFile::open(dir / "f.part");
  partial.append(bytes_of("hello "));
  partial.append(bytes_of("world"));
  partial.append({});
  EXPECT_EQ(partial.size(), 11U);
  EXPECT_EQ(read_file(dir / "f.part"), "hello world");
}

TEST(PartialFile, ReopenResumesAtExistingSize) {
  const TempDir dir;
  {
    PartialFile partial = PartialFile::open(dir / "f.part");
    partial.append(bytes_of("abc"));
  }
  PartialFile resumed = PartialFile::open(dir / "f.part");
  EXPECT_EQ(resumed.size(), 3U);
  resumed.append(bytes_of("def"));
  EXPECT_EQ(read_file(dir / "f.part"), "abcdef");
}

TEST(PartialFile, RestartTruncatesToZero) {
  const TempDir dir;
  PartialFile partial = PartialFile::open(dir / "f.part");
  partial.append(bytes_of("stale bytes"));
  partial.restart();
  EXPECT_EQ(partial.size(), 0U);
  EXPECT_EQ(std::filesystem::file_size(dir / "f.part"), 0U);
  partial.append(bytes_of("new"));
  EXPECT_EQ(read_file(dir / "f.part"), "new");
}

TEST(PartialFile, ReadExistingYieldsTheBytesInOrder) {
  const TempDir dir;
  {
    PartialFile partial = PartialFile::open(dir / "f.part");
    partial.append(bytes_of("first;"));
  }
  PartialFile resumed = PartialFile::open(dir / "f.part");
  resumed.append(bytes_of("second"));
  EXPECT_EQ(existing_bytes(resumed), "first;second");
}

TEST(PartialFile, ReadExistingSpansSeveralChunks) {
  const TempDir dir;
  std::string big(3 * (1 << 20) + 17, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  PartialFile partial = PartialFile::open(dir / "f.part");
  partial.append(bytes_of(big));
  EXPECT_EQ(existing_bytes(partial), big);
}

TEST(PartialFile, ReadExistingOfAnEmptyFileCallsNothing) {
  const TempDir dir;
  const PartialFile partial = PartialFile::open(dir / "f.part");
  int calls = 0;
  partial.read_existing([&](std::span<const std::byte>) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(PartialFile, CommitRenamesToTheFinalName) {
  const TempDir dir;
  PartialFile partial = PartialFile::open(dir / "f.part");
  partial.append(bytes_of("content"));
  std::move(partial).commit(dir / "final.bin");
  EXPECT_FALSE(std::filesystem::exists(dir / "f.part"));
  EXPECT_EQ(read_file(dir / "final.bin"), "content");
}

TEST(PartialFile, CommitReplacesAnExistingFile) {
  const TempDir dir;
  std::ofstream(dir / "final.bin") << "old";
  PartialFile partial = PartialFile::open(dir / "f.part");
  partial.append(bytes_of("new"));
  std::move(partial).commit(dir / "final.bin");
  EXPECT_EQ(read_file(dir / "final.bin"), "new");
}

TEST(PartialFile, CommitOfAnEmptyFilePublishesIt) {
  const TempDir dir;
  {
    PartialFile partial = PartialFile::open(dir / "f.part");
    std::move(partial).commit(dir / "empty.txt");
  }
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "empty.txt"));
  EXPECT_FALSE(std::filesystem::exists(dir / "f.part"));
}

TEST(PartialFile, AnEmptyPartialIsRemovedOnDestruction) {
  const TempDir dir;
  { const PartialFile partial = PartialFile::open(dir / "f.part"); }
  EXPECT_FALSE(std::filesystem::exists(dir / "f.part"));
}

TEST(PartialFile, ARestartedPartialIsRemovedOnDestruction) {
  const TempDir dir;
  {
    PartialFile partial = PartialFile::open(dir / "f.part");
    partial.append(bytes_of("x"));
    partial.restart();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "f.part"));
}

TEST(PartialFile, ANonEmptyPartialIsKeptOnDestruction) {
  const TempDir dir;
  {
    PartialFile partial = PartialFile::open(dir / "f.part");
    partial.append(bytes_of("keep me"));
  }
  EXPECT_EQ(read_file(dir / "f.part"), "keep me");
}

TEST(PartialFile, AMovedFromPartialDoesNotRemoveTheFile) {
  const TempDir dir;
  PartialFile partial = PartialFile::open(dir / "f.part");
  {
    PartialFile moved = std::move(partial);
    moved.append(bytes_of("x"));
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "f.part"));
}

TEST(PartialFile, OpenRefusesASymlink) {
  const TempDir dir;
  std::ofstream(dir / "target") << "precious";
  std::filesystem::create_symlink(dir / "target", dir / "f.part");
  EXPECT_THROW((void)PartialFile::open(dir / "f.part"), Error);
  EXPECT_EQ(read_file(dir / "target"), "precious");
}

TEST(PartialFile, OpenFailsInAMissingDirectory) {
  const TempDir dir;
  try {
    (void)PartialFile::open(dir / "missing" / "f.part");
    FAIL() << "opened";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInternal);
    EXPECT_EQ(error.file(), dir / "missing" / "f.part");
  }
}

}  // namespace
}  // namespace hfget::store
