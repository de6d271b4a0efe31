// SPDX-License-Identifier: MIT
#include "util/atomic_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "hfget/error.hpp"
#include "support/dead_pid.hpp"
#include "support/temp_dir.hpp"

namespace hfget::util {
namespace {

using test_support::TempDir;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

std::size_t entries_in(const std::filesystem::path& dir) {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++count;
  return count;
}

TEST(WriteFileAtomically, CreatesTheFile) {
  const TempDir dir;
  write_file_atomically(dir / "refs", "0123abc");
  EXPECT_EQ(read_file(dir / "refs"), "0123abc");
  EXPECT_EQ(entries_in(dir.path()), 1U);
}

TEST(WriteFileAtomically, ReplacesTheContentAndLeavesNoTemporaryFile) {
  const TempDir dir;
  std::ofstream(dir / "f") << "a much longer old content";
  write_file_atomically(dir / "f", "new");
  EXPECT_EQ(read_file(dir / "f"), "new");
  write_file_atomically(dir / "f", "");
  EXPECT_EQ(read_file(dir / "f"), "");
  EXPECT_EQ(entries_in(dir.path()), 1U);
}

TEST(WriteFileAtomically, WritesBinaryContentExactly) {
  const TempDir dir;
  const std::string content("a\0b\r\n\xff", 6);
  write_file_atomically(dir / "f", content);
  EXPECT_EQ(read_file(dir / "f"), content);
}

TEST(WriteFileAtomically, ReplacesASymlinkInsteadOfWritingThroughIt) {
  const TempDir dir;
  std::ofstream(dir / "target") << "precious";
  std::filesystem::create_symlink(dir / "target", dir / "f");
  write_file_atomically(dir / "f", "new");
  EXPECT_FALSE(std::filesystem::is_symlink(dir / "f"));
  EXPECT_EQ(read_file(dir / "f"), "new");
  EXPECT_EQ(read_file(dir / "target"), "precious");
}

TEST(WriteFileAtomically, ThrowsInAMissingDirectory) {
  const TempDir dir;
  try {
    write_file_atomically(dir / "missing" / "f", "x");
    FAIL() << "wrote";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInternal);
  }
}

// The owner token in a temporary this process names: ".refs.<host>-<pid>-<random>.hfget-tmp".
std::string owner_token_of(const std::filesystem::path& temporary, const std::string& stem) {
  const std::string name = temporary.filename().string();
  const std::size_t prefix = 1 + stem.size() + 1;
  return name.substr(prefix, name.size() - prefix - kTemporarySuffix.size());
}

TEST(TemporaryPathBeside, NamesThisProcessAsOwner) {
  const std::filesystem::path temporary = temporary_path_beside("/cache/repo/refs");
  EXPECT_EQ(temporary.parent_path(), std::filesystem::path("/cache/repo"));
  EXPECT_EQ(temporary.filename().string().rfind(".refs.", 0), 0U) << temporary;
  EXPECT_TRUE(temporary.filename().string().ends_with(kTemporarySuffix)) << temporary;
  const std::string owner = owner_token_of(temporary, "refs");
  EXPECT_NE(owner.find("-" + std::to_string(::getpid()) + "-"), std::string::npos) << owner;
  EXPECT_NE(temporary_path_beside("/cache/repo/refs"), temporary);
}

TEST(TemporaryPathBeside, FitsBesideANameOfTheLongestLength) {
  const TempDir dir;
  const std::string longest(255, 'n');  // a repo file name may be this long
  std::ofstream(dir / longest) << "old";
  write_file_atomically(dir / longest, "new");
  EXPECT_EQ(read_file(dir / longest), "new");
  const std::filesystem::path temporary = temporary_path_beside(dir / longest);
  EXPECT_EQ(temporary.filename().string().size(), 255U);
  EXPECT_TRUE(temporary.filename().string().ends_with(kTemporarySuffix));
  EXPECT_EQ(temporary.parent_path(), dir.path());
}

// What a kill -9 leaves between creating a temporary and renaming it: a file, or a link (a snapshot pointer).
TEST(RemoveStaleTemporaries, SweepsFilesAndLinksOfAProcessThatIsGoneAtOnce) {
  const TempDir dir;
  std::filesystem::create_directories(dir / "sub");
  const std::string mine = owner_token_of(temporary_path_beside(dir / "x"), "x");
  const std::string gone =
      mine.substr(0, mine.find('-')) + "-" + std::to_string(test_support::dead_pid()) + "-0000beef";
  std::ofstream(dir / "sub" / (".refs." + gone + std::string(kTemporarySuffix))) << "cut short";
  std::filesystem::create_symlink("../../blobs/abc",
                                  dir / "sub" / (".config.json." + gone + std::string(kTemporarySuffix)));
  std::ofstream(dir / "sub" / "config.json") << "kept";
  remove_stale_temporaries(dir.path());
  EXPECT_EQ(entries_in(dir / "sub"), 1U);
  EXPECT_TRUE(std::filesystem::exists(dir / "sub" / "config.json"));
}

TEST(RemoveStaleTemporaries, LeavesThoseOfALiveProcessAndYoungUnownedOnes) {
  const TempDir dir;
  const std::filesystem::path mine = temporary_path_beside(dir / "refs");
  std::ofstream(mine) << "in flight";
  std::ofstream(dir / ".refs.not-an-owner.hfget-tmp") << "whose?";
  remove_stale_temporaries(dir.path());
  EXPECT_TRUE(std::filesystem::exists(mine));
  EXPECT_TRUE(std::filesystem::exists(dir / ".refs.not-an-owner.hfget-tmp"));
}

TEST(ThrowFileError, MapsFullDiskAndQuotaToDiskFull) {
  for (const int error_number : {ENOSPC, EDQUOT}) {
    try {
      throw_file_error("cannot write", "/x/y", error_number);
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kDiskFull);
      EXPECT_EQ(error.file(), std::filesystem::path("/x/y"));
    }
  }
}

TEST(ThrowFileError, MapsOtherErrorsToInternalNamingPathAndCause) {
  try {
    throw_file_error("cannot open", "/x/y", EACCES);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInternal);
    const std::string what = error.what();
    EXPECT_NE(what.find("cannot open"), std::string::npos) << what;
    EXPECT_NE(what.find("/x/y"), std::string::npos) << what;
    EXPECT_NE(what.find("Permission denied"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace hfget::util
