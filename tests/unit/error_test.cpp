// SPDX-License-Identifier: MIT
#include "hfget/error.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace hfget {
namespace {

TEST(ErrorCodeToString, GivesEveryCodeItsOwnSnakeCaseName) {
  std::set<std::string> names;
  for (int i = 0; i <= static_cast<int>(ErrorCode::kInternal); ++i) {
    const std::string name(to_string(static_cast<ErrorCode>(i)));
    EXPECT_FALSE(name.empty()) << i;
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string::npos) << name;
    EXPECT_TRUE(names.insert(name).second) << name;
  }
  EXPECT_EQ(to_string(ErrorCode::kRepoNotFound), "repo_not_found");
  EXPECT_EQ(to_string(ErrorCode::kDiskFull), "disk_full");
}

TEST(Error, CarriesCodeMessageAndFile) {
  const Error error(ErrorCode::kVerificationFailed, "sha256 mismatch", "model.safetensors");
  EXPECT_EQ(error.code(), ErrorCode::kVerificationFailed);
  EXPECT_STREQ(error.what(), "sha256 mismatch");
  EXPECT_EQ(error.file(), std::filesystem::path("model.safetensors"));
}

TEST(Error, HasNoFileByDefault) {
  const Error error(ErrorCode::kNetwork, "unreachable");
  EXPECT_TRUE(error.file().empty());
}

}  // namespace
}  // namespace hfget
