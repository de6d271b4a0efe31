// SPDX-License-Identifier: MIT
#include "hfget/repo.hpp"

#include <gtest/gtest.h>

#include <string>

#include "hfget/error.hpp"

namespace hfget {
namespace {

ErrorCode code_of_parse(const std::string& name) {
  try {
    (void)RepoId::parse(name, RepoType::kModel);
  } catch (const Error& error) {
    return error.code();
  }
  ADD_FAILURE() << "'" << name << "' was accepted";
  return ErrorCode::kInternal;
}

TEST(RepoIdParse, AcceptsNamesTheHubAccepts) {
  for (const char* name : {"gpt2", "openai-community/gpt2", "moonshotai/Kimi-K2.5", "a/b", "org_1/x.y-z_w",
                           "Qwen/Qwen3-0.6B", "_a/b_", "1/2"}) {
    EXPECT_NO_THROW((void)RepoId::parse(name, RepoType::kModel)) << name;
  }
}

TEST(RepoIdParse, KeepsTypeAndName) {
  const RepoId repo = RepoId::parse("HuggingFaceFW/fineweb", RepoType::kDataset);
  EXPECT_EQ(repo.type, RepoType::kDataset);
  EXPECT_EQ(repo.name, "HuggingFaceFW/fineweb");
}

TEST(RepoIdParse, RejectsMoreThanOneSlash) {
  EXPECT_EQ(code_of_parse("a/b/c"), ErrorCode::kUsage);
}

TEST(RepoIdParse, RejectsPathTraversal) {
  EXPECT_EQ(code_of_parse("../x"), ErrorCode::kUsage);
  EXPECT_EQ(code_of_parse("x/.."), ErrorCode::kUsage);
  EXPECT_EQ(code_of_parse(".."), ErrorCode::kUsage);
  EXPECT_EQ(code_of_parse("a..b"), ErrorCode::kUsage);
}

TEST(RepoIdParse, RejectsDoubleDash) {
  EXPECT_EQ(code_of_parse("a--b"), ErrorCode::kUsage);
  EXPECT_EQ(code_of_parse("org/a--b"), ErrorCode::kUsage);
}

TEST(RepoIdParse, RejectsPartsStartingOrEndingWithDashOrDot) {
  for (const char* name : {"-a", "a-", ".a", "a.", "org/-a", "-org/a", "org./a", "org/a."}) {
    EXPECT_EQ(code_of_parse(name), ErrorCode::kUsage) << name;
  }
}

TEST(RepoIdParse, RejectsEmptyParts) {
  for (const char* name : {"", "/", "/a", "a/"}) EXPECT_EQ(code_of_parse(name), ErrorCode::kUsage) << name;
}

TEST(RepoIdParse, RejectsCharactersOutsideTheAllowedSet) {
  for (const char* name : {"a b", "a\\b", "a:b", "a@b", "a%2Fb", "\xC3\xBC", "a\nb", "a/b?c", "~a"}) {
    EXPECT_EQ(code_of_parse(name), ErrorCode::kUsage) << name;
  }
}

TEST(RepoIdParse, AllowsAtMost96Characters) {
  const std::string longest(96, 'a');
  EXPECT_NO_THROW((void)RepoId::parse(longest, RepoType::kModel));
  EXPECT_NO_THROW((void)RepoId::parse("org/" + std::string(92, 'b'), RepoType::kModel));
  EXPECT_EQ(code_of_parse(std::string(97, 'a')), ErrorCode::kUsage);
  EXPECT_EQ(code_of_parse("org/" + std::string(93, 'b')), ErrorCode::kUsage);
}

TEST(RepoIdParse, NamesTheRejectedIdInTheMessage) {
  try {
    (void)RepoId::parse("a/b/c", RepoType::kModel);
    FAIL() << "accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("a/b/c"), std::string::npos) << error.what();
  }
}

TEST(CacheFolderName, JoinsTypeAndPartsWithDoubleDashes) {
  EXPECT_EQ(cache_folder_name(RepoId::parse("org/name", RepoType::kModel)), "models--org--name");
  EXPECT_EQ(cache_folder_name(RepoId::parse("x/y", RepoType::kDataset)), "datasets--x--y");
  EXPECT_EQ(cache_folder_name(RepoId::parse("a/b", RepoType::kSpace)), "spaces--a--b");
}

TEST(CacheFolderName, HasOnePartForANameWithoutOrg) {
  EXPECT_EQ(cache_folder_name(RepoId::parse("gpt2", RepoType::kModel)), "models--gpt2");
}

TEST(ParseRepoType, ReadsTheThreeTypesAndNothingElse) {
  EXPECT_EQ(parse_repo_type("model"), RepoType::kModel);
  EXPECT_EQ(parse_repo_type("dataset"), RepoType::kDataset);
  EXPECT_EQ(parse_repo_type("space"), RepoType::kSpace);
  EXPECT_EQ(parse_repo_type("models"), std::nullopt);
  EXPECT_EQ(parse_repo_type("Model"), std::nullopt);
  EXPECT_EQ(parse_repo_type(""), std::nullopt);
}

TEST(RepoTypeToString, RoundTripsWithParseRepoType) {
  for (const RepoType type : {RepoType::kModel, RepoType::kDataset, RepoType::kSpace}) {
    EXPECT_EQ(parse_repo_type(to_string(type)), type);
  }
}

TEST(RemoteFileEtag, IsTheLfsSha256ForLfsFilesAndTheBlobIdOtherwise) {
  RemoteFile file;
  file.blob_id = std::string(40, 'a');
  EXPECT_FALSE(file.is_lfs());
  EXPECT_EQ(file.etag(), file.blob_id);
  file.lfs_sha256 = std::string(64, 'b');
  EXPECT_TRUE(file.is_lfs());
  EXPECT_EQ(file.etag(), *file.lfs_sha256);
}

}  // namespace
}  // namespace hfget
