// SPDX-License-Identifier: MIT
#include "util/atomic_file.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "hfget/error.hpp"
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
