// SPDX-License-Identifier: MIT
#include "transfer/selection.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hfget/error.hpp"

namespace hfget::transfer {
namespace {

std::vector<RemoteFile> listing_of(const std::vector<std::string>& paths) {
  std::vector<RemoteFile> files;
  for (const std::string& path : paths) {
    RemoteFile file;
    file.path = path;
    file.blob_id = std::string(40, '0');
    files.push_back(file);
  }
  return files;
}

const std::vector<RemoteFile> kListing = listing_of({
    ".gitattributes",
    "README.md",
    "config.json",
    "model-00001-of-00002.safetensors",
    "model-00002-of-00002.safetensors",
    "onnx/model.onnx",
    "onnx/config.json",
    "original/consolidated.pth",
});

std::vector<std::string> selected_paths(const FileSelection& selection) {
  std::vector<std::string> paths;
  for (const RemoteFile& file : select_files(kListing, selection)) paths.push_back(file.path);
  return paths;
}

using Paths = std::vector<std::string>;

TEST(SelectFiles, EmptySelectionKeepsEverythingInListingOrder) {
  Paths all;
  for (const RemoteFile& file : kListing) all.push_back(file.path);
  EXPECT_EQ(selected_paths({}), all);
}

TEST(SelectFiles, IncludeKeepsMatchingFilesAtAnyDepth) {
  EXPECT_EQ(selected_paths({{}, {"*.json"}, {}}), (Paths{"config.json", "onnx/config.json"}));
}

TEST(SelectFiles, SeveralIncludesAreAlternatives) {
  EXPECT_EQ(selected_paths({{}, {"*.md", "*.onnx"}, {}}), (Paths{"README.md", "onnx/model.onnx"}));
}

TEST(SelectFiles, ExcludeDropsMatchingFiles) {
  EXPECT_EQ(selected_paths({{}, {}, {"*.safetensors", "original/*", ".*"}}),
            (Paths{"README.md", "config.json", "onnx/model.onnx", "onnx/config.json"}));
}

TEST(SelectFiles, ExcludeWinsOverInclude) {
  EXPECT_EQ(selected_paths({{}, {"*.json"}, {"onnx/*"}}), (Paths{"config.json"}));
}

TEST(SelectFiles, TrailingSlashSelectsADirectory) {
  EXPECT_EQ(selected_paths({{}, {"onnx/"}, {}}), (Paths{"onnx/model.onnx", "onnx/config.json"}));
  EXPECT_EQ(selected_paths({{}, {}, {"onnx/", "original/"}}).size(), 5U);
}

TEST(SelectFiles, BackslashIsReadAsSlash) {
  EXPECT_EQ(selected_paths({{}, {"onnx\\*"}, {}}), (Paths{"onnx/model.onnx", "onnx/config.json"}));
  EXPECT_EQ(selected_paths({{"onnx\\model.onnx"}, {}, {}}), (Paths{"onnx/model.onnx"}));
  EXPECT_EQ(selected_paths({{}, {"onnx\\"}, {}}), (Paths{"onnx/model.onnx", "onnx/config.json"}));
}

TEST(SelectFiles, FilesAreAllowPatternsToo) {
  EXPECT_EQ(selected_paths({{"config.json"}, {}, {}}), (Paths{"config.json"}));
  EXPECT_EQ(selected_paths({{"model-*.safetensors"}, {}, {}}),
            (Paths{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}));
  EXPECT_EQ(selected_paths({{"README.md"}, {"*.onnx"}, {}}), (Paths{"README.md", "onnx/model.onnx"}));
}

TEST(SelectFiles, ALiteralFileMustMatchAWholePath) {
  // "config.json" is not a pattern matching onnx/config.json: fnmatch is anchored.
  EXPECT_EQ(selected_paths({{"onnx/config.json"}, {}, {}}), (Paths{"onnx/config.json"}));
}

TEST(SelectFiles, AMissingLiteralFileIsFileNotFoundNamingIt) {
  try {
    (void)select_files(kListing, {{"config.json", "tokenizer.json"}, {}, {}});
    FAIL() << "accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kFileNotFound);
    EXPECT_EQ(error.file(), std::filesystem::path("tokenizer.json"));
    EXPECT_NE(std::string(error.what()).find("tokenizer.json"), std::string::npos) << error.what();
  }
}

TEST(SelectFiles, ALiteralFileIsCaseSensitive) {
  EXPECT_THROW((void)select_files(kListing, {{"readme.md"}, {}, {}}), Error);
}

TEST(SelectFiles, APatternMatchingNothingIsFineWhenSomethingElseMatches) {
  EXPECT_EQ(selected_paths({{"*.gguf", "config.json"}, {}, {}}), Paths({"config.json"}));
  EXPECT_EQ(selected_paths({{}, {"*.gguf", "README.md"}, {}}), Paths({"README.md"}));
}

TEST(SelectFiles, ASelectionThatKeepsNothingIsFileNotFoundNamingThePatterns) {
  try {
    (void)select_files(kListing, {{}, {"*.gguf"}, {}});
    FAIL() << "an empty selection was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kFileNotFound);
    EXPECT_NE(std::string(error.what()).find("--include '*.gguf'"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("--allow-empty"), std::string::npos) << error.what();
  }
  EXPECT_THROW((void)select_files(kListing, {{"missing/"}, {}, {}}), Error);
  EXPECT_THROW((void)select_files(kListing, {{}, {}, {"*"}}), Error);
  EXPECT_THROW((void)select_files({}, {}), Error);
}

TEST(SelectFiles, AllowEmptyAcceptsASelectionThatKeepsNothing) {
  EXPECT_TRUE(selected_paths({{"*.gguf"}, {}, {}, /*allow_empty=*/true}).empty());
  EXPECT_TRUE(selected_paths({{"model-0000[3-9]*"}, {}, {}, true}).empty());
  EXPECT_TRUE(select_files({}, {{}, {}, {}, true}).empty());
}

TEST(SelectFiles, ALiteralFileThatIsExcludedIsNotFileNotFoundForTheFile) {
  EXPECT_TRUE(selected_paths({{"config.json"}, {}, {"*.json"}, true}).empty());
}

TEST(SelectFiles, KeepsTheFileDetails) {
  std::vector<RemoteFile> listing = listing_of({"a.bin"});
  listing[0].size = 42;
  listing[0].lfs_sha256 = std::string(64, 'f');
  const std::vector<RemoteFile> selected = select_files(listing, {});
  ASSERT_EQ(selected.size(), 1U);
  EXPECT_EQ(selected[0].size, 42U);
  EXPECT_EQ(selected[0].lfs_sha256, listing[0].lfs_sha256);
}

}  // namespace
}  // namespace hfget::transfer
