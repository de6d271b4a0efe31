// SPDX-License-Identifier: MIT
#include "hub/hub_urls.hpp"

#include <gtest/gtest.h>

namespace hfget::hub {
namespace {

const std::string kEndpoint = "https://huggingface.co";
const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";

TEST(RevisionInfoUrl, UsesThePluralTypeInTheApiPath) {
  EXPECT_EQ(revision_info_url(kEndpoint, RepoId::parse("org/m", RepoType::kModel), "main"),
            "https://huggingface.co/api/models/org/m/revision/main");
  EXPECT_EQ(revision_info_url(kEndpoint, RepoId::parse("org/d", RepoType::kDataset), "main"),
            "https://huggingface.co/api/datasets/org/d/revision/main");
  EXPECT_EQ(revision_info_url(kEndpoint, RepoId::parse("org/s", RepoType::kSpace), "main"),
            "https://huggingface.co/api/spaces/org/s/revision/main");
}

TEST(RevisionInfoUrl, EncodesTheWholeRevisionIncludingSlashes) {
  EXPECT_EQ(revision_info_url(kEndpoint, RepoId::parse("gpt2", RepoType::kModel), "refs/pr/1"),
            "https://huggingface.co/api/models/gpt2/revision/refs%2Fpr%2F1");
  EXPECT_EQ(revision_info_url(kEndpoint, RepoId::parse("gpt2", RepoType::kModel), "v1.0 beta"),
            "https://huggingface.co/api/models/gpt2/revision/v1.0%20beta");
}

TEST(TreeUrl, AsksForTheRecursiveListingOfTheCommit) {
  EXPECT_EQ(tree_url(kEndpoint, RepoId::parse("org/m", RepoType::kModel), kCommit),
            "https://huggingface.co/api/models/org/m/tree/" + kCommit + "?recursive=true&expand=false");
  EXPECT_EQ(tree_url("http://127.0.0.1:8080", RepoId::parse("x/y", RepoType::kDataset), kCommit),
            "http://127.0.0.1:8080/api/datasets/x/y/tree/" + kCommit + "?recursive=true&expand=false");
}

TEST(TreeUrl, EncodesARevisionWithSlashes) {
  EXPECT_EQ(tree_url(kEndpoint, RepoId::parse("gpt2", RepoType::kModel), "refs/pr/1"),
            "https://huggingface.co/api/models/gpt2/tree/refs%2Fpr%2F1?recursive=true&expand=false");
}

TEST(RepoPageUrl, IsWhereTheHubShowsTheRepo) {
  EXPECT_EQ(repo_page_url(kEndpoint, RepoId::parse("org/m", RepoType::kModel)), "https://huggingface.co/org/m");
  EXPECT_EQ(repo_page_url(kEndpoint, RepoId::parse("org/d", RepoType::kDataset)),
            "https://huggingface.co/datasets/org/d");
  EXPECT_EQ(repo_page_url(kEndpoint, RepoId::parse("gpt2", RepoType::kModel)), "https://huggingface.co/gpt2");
}

TEST(ResolveUrl, HasNoPrefixForModelsAndATypePrefixOtherwise) {
  EXPECT_EQ(resolve_url(kEndpoint, RepoId::parse("org/m", RepoType::kModel), kCommit, "config.json"),
            "https://huggingface.co/org/m/resolve/" + kCommit + "/config.json");
  EXPECT_EQ(resolve_url(kEndpoint, RepoId::parse("org/d", RepoType::kDataset), kCommit, "data/train.parquet"),
            "https://huggingface.co/datasets/org/d/resolve/" + kCommit + "/data/train.parquet");
  EXPECT_EQ(resolve_url(kEndpoint, RepoId::parse("org/s", RepoType::kSpace), kCommit, "app.py"),
            "https://huggingface.co/spaces/org/s/resolve/" + kCommit + "/app.py");
}

TEST(ResolveUrl, EncodesThePathButKeepsItsSlashes) {
  EXPECT_EQ(resolve_url(kEndpoint, RepoId::parse("gpt2", RepoType::kModel), kCommit, "sub dir/\xC3\xBC #1+.txt"),
            "https://huggingface.co/gpt2/resolve/" + kCommit + "/sub%20dir/%C3%BC%20%231%2B.txt");
}

TEST(ResolveUrl, EncodesARevisionWithSlashes) {
  EXPECT_EQ(resolve_url(kEndpoint, RepoId::parse("gpt2", RepoType::kModel), "refs/pr/1", "a/b.bin"),
            "https://huggingface.co/gpt2/resolve/refs%2Fpr%2F1/a/b.bin");
}

}  // namespace
}  // namespace hfget::hub
