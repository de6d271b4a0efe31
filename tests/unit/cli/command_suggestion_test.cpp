// SPDX-License-Identifier: MIT
#include "cli/command_suggestion.hpp"

#include <gtest/gtest.h>

namespace hfget::cli {
namespace {

const std::vector<std::string> kCommands{"download", "verify", "status", "wait", "ls", "cache", "rm"};

TEST(ClosestMatch, FindsTheCommandBehindACommonTypo) {
  EXPECT_EQ(closest_match("downlod", kCommands), "download");
  EXPECT_EQ(closest_match("downlaod", kCommands), "download");  // two neighbours swapped
  EXPECT_EQ(closest_match("verfy", kCommands), "verify");
  EXPECT_EQ(closest_match("stauts", kCommands), "status");
}

TEST(ClosestMatch, NothingWhenNoCandidateIsNear) {
  EXPECT_EQ(closest_match("upload", kCommands), std::nullopt);
  EXPECT_EQ(closest_match("xyz", kCommands), std::nullopt);
  EXPECT_EQ(closest_match("", kCommands), std::nullopt);
  EXPECT_EQ(closest_match(std::string(1000, 'd'), kCommands), std::nullopt);
}

TEST(ClosestMatch, FlagsToo) {
  EXPECT_EQ(closest_match("--force-downlaod", {"--force-download", "--local-dir", "--include"}), "--force-download");
  EXPECT_EQ(closest_match("--inculde", {"--force-download", "--local-dir", "--include"}), "--include");
}

}  // namespace
}  // namespace hfget::cli
