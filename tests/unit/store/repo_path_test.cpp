// SPDX-License-Identifier: MIT
#include "store/repo_path.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "hfget/error.hpp"
#include "support/temp_dir.hpp"

namespace hfget::store {
namespace {

using test_support::TempDir;

TEST(UnsafePathReason, AcceptsOrdinaryRepoPaths) {
  for (const char* path : {"config.json", "a/b/c.bin", ".gitattributes", "dir/.hidden", "..a", "a..", "a/...",
                           "sub dir/\xC3\xBC.txt", "ab:c", "-x", "a/b:c"}) {
    EXPECT_EQ(unsafe_path_reason(path), std::nullopt) << path;
  }
}

TEST(UnsafePathReason, RejectsParentComponents) {
  for (const char* path : {"..", "../x", "a/../x", "a/..", "a/b/../../.."}) {
    EXPECT_TRUE(unsafe_path_reason(path)) << path;
  }
}

TEST(UnsafePathReason, RejectsAbsolutePaths) {
  EXPECT_TRUE(unsafe_path_reason("/abs"));
  EXPECT_TRUE(unsafe_path_reason("/"));
  EXPECT_TRUE(unsafe_path_reason("//server/share"));
}

TEST(UnsafePathReason, RejectsEmptyAndDotComponents) {
  for (const char* path : {"", "a//b", "a/", "a/./b", ".", "./a", "a/."}) {
    EXPECT_TRUE(unsafe_path_reason(path)) << '"' << path << '"';
  }
}

TEST(UnsafePathReason, RejectsWindowsDriveAndBackslashPaths) {
  for (const char* path : {"C:x", "C:\\x", "c:/x", "a\\b", "..\\x", "\\\\server\\share"}) {
    EXPECT_TRUE(unsafe_path_reason(path)) << path;
  }
}

TEST(UnsafePathReason, RejectsNulAndControlCharacters) {
  EXPECT_TRUE(unsafe_path_reason(std::string("a\0b", 3)));
  for (const char* path : {"a\nb", "a\rb", "a\tb", "a\x1b[31m", "a\x7f"}) {
    EXPECT_TRUE(unsafe_path_reason(path)) << path;
  }
}

TEST(UnsafePathReason, LimitsComponentAndPathLength) {
  EXPECT_EQ(unsafe_path_reason(std::string(255, 'a')), std::nullopt);
  EXPECT_TRUE(unsafe_path_reason(std::string(256, 'a')));
  EXPECT_TRUE(unsafe_path_reason("dir/" + std::string(256, 'a') + "/x"));
  std::string deep;
  while (deep.size() < 4096) deep += "abcdefg/";
  deep += "x";
  EXPECT_TRUE(unsafe_path_reason(deep));
}

RemoteFile file_at(const std::string& path) {
  RemoteFile file;
  file.path = path;
  file.blob_id = std::string(40, '0');
  return file;
}

ErrorCode code_of_validate(const std::vector<RemoteFile>& files) {
  try {
    validate_listing(files);
  } catch (const Error& error) {
    return error.code();
  }
  return ErrorCode::kInternal;
}

TEST(ValidateListing, AcceptsASaneListing) {
  EXPECT_NO_THROW(validate_listing({file_at("a"), file_at("b/c"), file_at("b/d"), file_at("ab/c"), file_at("b.c")}));
  EXPECT_NO_THROW(validate_listing({}));
}

TEST(ValidateListing, RejectsAnUnsafePath) {
  EXPECT_EQ(code_of_validate({file_at("ok"), file_at("../escape")}), ErrorCode::kNetwork);
}

TEST(ValidateListing, NamesTheUnsafePathPrintably) {
  try {
    validate_listing({file_at("bad\x1b[2Jname")});
    FAIL() << "accepted";
  } catch (const Error& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("bad\\x1b[2Jname"), std::string::npos) << what;
    EXPECT_EQ(what.find('\x1b'), std::string::npos);
  }
}

TEST(ValidateListing, RejectsDuplicates) {
  EXPECT_EQ(code_of_validate({file_at("a/b"), file_at("c"), file_at("a/b")}), ErrorCode::kNetwork);
}

TEST(ValidateListing, RejectsAPathThatIsBothFileAndDirectory) {
  EXPECT_EQ(code_of_validate({file_at("a"), file_at("a/b")}), ErrorCode::kNetwork);
  EXPECT_EQ(code_of_validate({file_at("x/y/z"), file_at("x/y")}), ErrorCode::kNetwork);
}

TEST(CreateDirectoriesWithin, CreatesEachComponent) {
  const TempDir root;
  create_directories_within(root.path(), "a/b/c");
  EXPECT_TRUE(std::filesystem::is_directory(root / "a/b/c"));
  create_directories_within(root.path(), "a/b/c");  // already there: fine
  create_directories_within(root.path(), "");       // nothing to do
}

TEST(CreateDirectoriesWithin, RefusesASymlinkedComponent) {
  const TempDir root;
  const TempDir outside;
  std::filesystem::create_directory(root / "a");
  std::filesystem::create_directory_symlink(outside.path(), root / "a/link");
  try {
    create_directories_within(root.path(), "a/link/evil");
    FAIL() << "went through the symlink";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInternal);
    EXPECT_EQ(error.file(), root / "a/link");
  }
  EXPECT_FALSE(std::filesystem::exists(outside / "evil"));
}

TEST(CreateDirectoriesWithin, RefusesAFileInTheWay) {
  const TempDir root;
  std::ofstream(root / "a") << "x";
  EXPECT_THROW(create_directories_within(root.path(), "a/b"), Error);
}

}  // namespace
}  // namespace hfget::store
