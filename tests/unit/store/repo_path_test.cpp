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

TEST(UnsafePathReason, RejectsGitsOwnFilesInEverySpellingGitRefuses) {
  for (const char* path : {".git", ".git/config", ".GIT/config", ".Git/hooks/pre-commit", "sub/.git/config",
                           ".git./config", ".git /config", ".git. . /x", "git~1/config", "GIT~1/config"}) {
    ASSERT_TRUE(unsafe_path_reason(path)) << path;
    EXPECT_NE(unsafe_path_reason(path)->find(".git"), std::string::npos) << path;
  }
  for (const char* path :
       {".gitattributes", ".gitignore", ".github/workflows/x.yml", "a.git", ".git-blame-ignore-revs", "git/config"}) {
    EXPECT_EQ(unsafe_path_reason(path), std::nullopt) << path;
  }
}

TEST(UnsafePathReason, RejectsBidiInvisibleAndC1CharactersAndInvalidUtf8) {
  for (const char* path : {"evil\xe2\x80\xaegpj.exe",
                           "a\xe2\x81\xa6"
                           "b",
                           "zero\xe2\x80\x8bwidth",
                           "c1\xc2\x9b"
                           "2J",
                           "raw\x9b", "\xff\xfe", "over\xc0\xaflong", "bom\xef\xbb\xbf"}) {
    EXPECT_TRUE(unsafe_path_reason(path)) << path;
  }
  EXPECT_EQ(unsafe_path_reason("mod\xc3\xa8le/\xe6\xa8\xa1\xe5\x9e\x8b.bin"), std::nullopt);
}

TEST(IsReservedMetadataPath, CoversTheMetadataFolderInAnyCaseAndNothingElse) {
  EXPECT_TRUE(is_reserved_metadata_path(".cache/huggingface/download/a.metadata"));
  EXPECT_TRUE(is_reserved_metadata_path(".Cache/HUGGINGFACE/hfget/x.json"));
  EXPECT_TRUE(is_reserved_metadata_path(".cache/huggingface"));
  EXPECT_TRUE(is_reserved_metadata_path(".cache"));
  EXPECT_FALSE(is_reserved_metadata_path(".cache/other"));
  EXPECT_FALSE(is_reserved_metadata_path(".cachex/huggingface/a"));
  EXPECT_FALSE(is_reserved_metadata_path("sub/.cache/huggingface/a"));
  EXPECT_FALSE(is_reserved_metadata_path(".cache/huggingfacex/a"));
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

ErrorCode code_of_validate(std::vector<RemoteFile> files) {
  try {
    validate_listing(files);
  } catch (const Error& error) {
    return error.code();
  }
  return ErrorCode::kInternal;
}

TEST(ValidateListing, AcceptsASaneListing) {
  std::vector<RemoteFile> files{file_at("a"), file_at("b/c"), file_at("b/d"), file_at("ab/c"), file_at("b.c")};
  EXPECT_TRUE(validate_listing(files).empty());
  EXPECT_EQ(files.size(), 5u);
  std::vector<RemoteFile> none;
  EXPECT_NO_THROW(validate_listing(none));
}

TEST(ValidateListing, DropsPathsUnderTheMetadataFolderAndSaysWhich) {
  std::vector<RemoteFile> files{file_at("config.json"),
                                file_at(".cache/huggingface/download/x.metadata"),
                                file_at(".CACHE/HuggingFace/.gitignore"),
                                file_at(".cache/huggingface"),
                                file_at(".cache"),
                                file_at(".cache/other/kept.txt"),
                                file_at("a/.cache/huggingface/x")};
  const std::vector<std::string> dropped = validate_listing(files);
  EXPECT_EQ(dropped, (std::vector<std::string>{".cache/huggingface/download/x.metadata",
                                               ".CACHE/HuggingFace/.gitignore", ".cache/huggingface", ".cache"}));
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[1].path, ".cache/other/kept.txt");
  EXPECT_EQ(files[2].path, "a/.cache/huggingface/x");
}

TEST(ValidateListing, RefusesSizesThatAddUpPastAnyRealRepository) {
  std::vector<RemoteFile> files;
  for (int i = 0; i < 16384; ++i) {
    files.push_back(file_at("huge/" + std::to_string(i)));
    files.back().size = std::uint64_t{1} << 50;  // 16384 of them: 2^64, a sum that wraps to 0
  }
  EXPECT_EQ(code_of_validate(files), ErrorCode::kNetwork);
  files.resize(8192);  // 2^63: no overflow yet, still far past 2^53
  EXPECT_EQ(code_of_validate(files), ErrorCode::kNetwork);
  files.resize(8);  // 2^53
  EXPECT_NO_THROW(validate_listing(files));
}

TEST(ValidateListing, RejectsAnUnsafePath) {
  EXPECT_EQ(code_of_validate({file_at("ok"), file_at("../escape")}), ErrorCode::kNetwork);
}

TEST(ValidateListing, NamesTheUnsafePathPrintably) {
  try {
    std::vector<RemoteFile> files{file_at("bad\x1b[2Jname")};
    validate_listing(files);
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
