// SPDX-License-Identifier: MIT
#include "util/glob_match.hpp"

#include <gtest/gtest.h>

namespace hfget::util {

TEST(FnmatchCase, StarCrossesSlashesAsThePythonClientDoes) {
  EXPECT_TRUE(fnmatch_case("*.json", "config.json"));
  EXPECT_TRUE(fnmatch_case("*.json", "a/b/c.json"));
  EXPECT_FALSE(fnmatch_case("*.json", "config.json.bak"));
}

TEST(FnmatchCase, IsCaseSensitiveAndAnchored) {
  EXPECT_FALSE(fnmatch_case("*.JSON", "config.json"));
  EXPECT_FALSE(fnmatch_case("config", "config.json"));
  EXPECT_TRUE(fnmatch_case("config.json", "config.json"));
}

TEST(FnmatchCase, SupportsQuestionMarkAndSets) {
  EXPECT_TRUE(fnmatch_case("model-0000?-of-00004.safetensors", "model-00003-of-00004.safetensors"));
  EXPECT_TRUE(fnmatch_case("model-0000[1-2]-*", "model-00002-of-00004.safetensors"));
  EXPECT_FALSE(fnmatch_case("model-0000[1-2]-*", "model-00003-of-00004.safetensors"));
  EXPECT_TRUE(fnmatch_case("model-0000[!1-2]-*", "model-00003-of-00004.safetensors"));
}

TEST(FnmatchCase, TreatsUnclosedBracketAsLiteral) {
  EXPECT_TRUE(fnmatch_case("a[b", "a[b"));
  EXPECT_FALSE(fnmatch_case("a[b", "ab"));
}

TEST(FnmatchCase, BacktracksOverSeveralStars) {
  EXPECT_TRUE(fnmatch_case("*a*b*c", "xxaxxbxxbxc"));
  EXPECT_FALSE(fnmatch_case("*a*b*c", "xxaxxbxxbx"));
  EXPECT_TRUE(fnmatch_case("*", ""));
  EXPECT_TRUE(fnmatch_case("docs/*", "docs/a/b.md"));
}

TEST(FnmatchCase, ReadsSetEdgeCasesAsPythonDoes) {
  EXPECT_TRUE(fnmatch_case("[]]", "]"));  // ']' first in a set is a member
  EXPECT_TRUE(fnmatch_case("[!]]", "a"));
  EXPECT_FALSE(fnmatch_case("[!]]", "]"));
  EXPECT_TRUE(fnmatch_case("[a-]", "-"));  // '-' last in a set is a member
  EXPECT_TRUE(fnmatch_case("[a-]", "a"));
  EXPECT_FALSE(fnmatch_case("[a-]", "b"));
  EXPECT_TRUE(fnmatch_case("[!]", "[!]"));  // unclosed: all literal
  EXPECT_TRUE(fnmatch_case("[*]", "*"));    // inside a set, '*' and '?' are plain characters
  EXPECT_FALSE(fnmatch_case("[*]", "x"));
}

TEST(FnmatchCase, QuestionMarkMatchesExactlyOneCharacterIncludingSlash) {
  EXPECT_TRUE(fnmatch_case("a?b", "a/b"));
  EXPECT_FALSE(fnmatch_case("a?b", "ab"));
  EXPECT_FALSE(fnmatch_case("?", ""));
}

TEST(FnmatchCase, EmptyPatternMatchesOnlyEmptyText) {
  EXPECT_TRUE(fnmatch_case("", ""));
  EXPECT_FALSE(fnmatch_case("", "a"));
}

}  // namespace hfget::util
