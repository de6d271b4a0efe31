// SPDX-License-Identifier: MIT
#include "util/percent_encode.hpp"

#include <gtest/gtest.h>

#include <string>

namespace hfget::util {

TEST(PercentEncode, KeepsUnreservedCharacters) {
  EXPECT_EQ(percent_encode("AZaz09_.-~", ""), "AZaz09_.-~");
}

TEST(PercentEncode, EncodesUtf8BytesAndReservedCharactersWithUppercaseHex) {
  EXPECT_EQ(percent_encode("\xC3\xBC+#", ""), "%C3%BC%2B%23");  // "ü+#"
  EXPECT_EQ(percent_encode("?&=%", ""), "%3F%26%3D%25");
}

TEST(PercentEncode, EncodesSpaceAsPercent20NotPlus) {
  EXPECT_EQ(percent_encode("a b", "/"), "a%20b");
}

TEST(PercentEncode, KeepsSlashOnlyWhenSafe) {
  EXPECT_EQ(percent_encode("dir/sub dir/f.bin", "/"), "dir/sub%20dir/f.bin");
  EXPECT_EQ(percent_encode("a/b", ""), "a%2Fb");
}

TEST(PercentEncode, EncodesPullRequestRevisionEntirely) {
  EXPECT_EQ(percent_encode("refs/pr/1", ""), "refs%2Fpr%2F1");
}

TEST(PercentEncode, EncodesControlAndHighBytes) {
  EXPECT_EQ(percent_encode(std::string("\x00\x1f\x7f\xff", 4), ""), "%00%1F%7F%FF");
}

TEST(PercentEncode, EmptyStaysEmpty) {
  EXPECT_EQ(percent_encode("", "/"), "");
}

TEST(PercentDecode, UndoesPercentEncode) {
  EXPECT_EQ(percent_decode("refs%2Fpr%2F1"), "refs/pr/1");
  EXPECT_EQ(percent_decode(percent_encode("\xC3\xBC+# a/b", "")), "\xC3\xBC+# a/b");
  EXPECT_EQ(percent_decode("plain"), "plain");
}

TEST(PercentDecode, RefusesTruncatedOrInvalidEscapesAndNul) {
  EXPECT_EQ(percent_decode("a%2"), std::nullopt);
  EXPECT_EQ(percent_decode("a%"), std::nullopt);
  EXPECT_EQ(percent_decode("a%zz"), std::nullopt);
  EXPECT_EQ(percent_decode("a%00b"), std::nullopt);
}

}  // namespace hfget::util
