// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "hfget/error.hpp"
#include "hfget/repo.hpp"

namespace hfget {
namespace {

ErrorCode code_of(std::string_view text, std::optional<RepoType> type = std::nullopt) {
  try {
    parse_repo_reference(text, type);
  } catch (const Error& error) {
    return error.code();
  }
  return ErrorCode::kInternal;
}

TEST(ParseRepoReference, PlainIdIsAModelWithNoRevision) {
  const RepoReference ref = parse_repo_reference("org/name", std::nullopt);
  EXPECT_EQ(ref.repo.name, "org/name");
  EXPECT_EQ(ref.repo.type, RepoType::kModel);
  EXPECT_EQ(ref.revision, std::nullopt);
  EXPECT_EQ(ref.origin, std::nullopt);
}

TEST(ParseRepoReference, RepoTypeFlagAppliesToAPlainId) {
  EXPECT_EQ(parse_repo_reference("org/name", RepoType::kDataset).repo.type, RepoType::kDataset);
}

TEST(ParseRepoReference, TypePrefixNamesTheType) {
  const RepoReference ref = parse_repo_reference("datasets/org/name", std::nullopt);
  EXPECT_EQ(ref.repo.name, "org/name");
  EXPECT_EQ(ref.repo.type, RepoType::kDataset);
  EXPECT_EQ(parse_repo_reference("spaces/org/app", std::nullopt).repo.type, RepoType::kSpace);
  EXPECT_EQ(parse_repo_reference("models/org/m", std::nullopt).repo.type, RepoType::kModel);
}

TEST(ParseRepoReference, TypePrefixWithOneNameIsACanonicalRepo) {
  const RepoReference ref = parse_repo_reference("datasets/squad", std::nullopt);
  EXPECT_EQ(ref.repo.name, "squad");
  EXPECT_EQ(ref.repo.type, RepoType::kDataset);
}

TEST(ParseRepoReference, TypePrefixThatDisagreesWithTheFlagIsAUsageError) {
  EXPECT_EQ(code_of("datasets/org/name", RepoType::kModel), ErrorCode::kUsage);
  EXPECT_EQ(parse_repo_reference("datasets/org/name", RepoType::kDataset).repo.type, RepoType::kDataset);
}

TEST(ParseRepoReference, AtSignGivesTheRevision) {
  const RepoReference ref = parse_repo_reference("org/name@v1.0", std::nullopt);
  EXPECT_EQ(ref.repo.name, "org/name");
  EXPECT_EQ(ref.revision, "v1.0");
}

TEST(ParseRepoReference, HfUrlWithTypeAndRevision) {
  const RepoReference ref = parse_repo_reference("hf://datasets/org/name@dev", std::nullopt);
  EXPECT_EQ(ref.repo.name, "org/name");
  EXPECT_EQ(ref.repo.type, RepoType::kDataset);
  EXPECT_EQ(ref.revision, "dev");
  EXPECT_EQ(ref.origin, std::nullopt);
}

TEST(ParseRepoReference, PullRequestRevisionKeepsItsSlashes) {
  EXPECT_EQ(parse_repo_reference("hf://org/name@refs/pr/3", std::nullopt).revision, "refs/pr/3");
  EXPECT_EQ(parse_repo_reference("org/name@refs%2Fpr%2F3", std::nullopt).revision, "refs/pr/3");
}

TEST(ParseRepoReference, HubPageUrl) {
  const RepoReference ref = parse_repo_reference("https://huggingface.co/org/name", std::nullopt);
  EXPECT_EQ(ref.repo.name, "org/name");
  EXPECT_EQ(ref.origin, "https://huggingface.co");
  EXPECT_EQ(ref.revision, std::nullopt);
  EXPECT_EQ(parse_repo_reference("https://huggingface.co/org/name/", std::nullopt).repo.name, "org/name");
  EXPECT_EQ(parse_repo_reference("http://127.0.0.1:8080/org/name?x=1#top", std::nullopt).origin,
            "http://127.0.0.1:8080");
}

TEST(ParseRepoReference, HubTreeUrlGivesTheRevision) {
  const RepoReference ref =
      parse_repo_reference("https://huggingface.co/datasets/org/name/tree/refs%2Fpr%2F1", std::nullopt);
  EXPECT_EQ(ref.repo.type, RepoType::kDataset);
  EXPECT_EQ(ref.revision, "refs/pr/1");
}

TEST(ParseRepoReference, PathsInsideTheRepoAreRefused) {
  EXPECT_EQ(code_of("https://huggingface.co/org/name/resolve/main/config.json"), ErrorCode::kUsage);
  EXPECT_EQ(code_of("https://huggingface.co/org/name/tree/main/sub"), ErrorCode::kUsage);
  EXPECT_EQ(code_of("hf://org/name@main/config.json"), ErrorCode::kUsage);
  EXPECT_EQ(code_of("hf://org/name/config.json"), ErrorCode::kUsage);
}

TEST(ParseRepoReference, InvalidIdsStayInvalid) {
  EXPECT_EQ(code_of(""), ErrorCode::kUsage);
  EXPECT_EQ(code_of("hf://"), ErrorCode::kUsage);
  EXPECT_EQ(code_of("https://huggingface.co/"), ErrorCode::kUsage);
  EXPECT_EQ(code_of("../x"), ErrorCode::kUsage);
  EXPECT_EQ(code_of("/abs"), ErrorCode::kUsage);
  EXPECT_EQ(code_of("org/"), ErrorCode::kUsage);
  EXPECT_EQ(code_of("org//name"), ErrorCode::kUsage);
  EXPECT_EQ(code_of("hf://org/name/"), ErrorCode::kUsage);
  EXPECT_EQ(code_of("org/name@"), ErrorCode::kUsage);
  EXPECT_EQ(code_of("org/name@a%zz"), ErrorCode::kUsage);
}

}  // namespace
}  // namespace hfget
