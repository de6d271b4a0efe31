// SPDX-License-Identifier: MIT
#include "http/link_header.hpp"

#include <gtest/gtest.h>

namespace hfget::http {
namespace {

TEST(NextLink, ExtractsTheHubsPaginationLink) {
  EXPECT_EQ(next_link(R"(<https://huggingface.co/api/models/x/tree/c?recursive=true&cursor=abc>; rel="next")"),
            std::optional<std::string>("https://huggingface.co/api/models/x/tree/c?recursive=true&cursor=abc"));
}

TEST(NextLink, AcceptsAnUnquotedRel) {
  EXPECT_EQ(next_link("<https://h/p?c=2>; rel=next"), std::optional<std::string>("https://h/p?c=2"));
}

TEST(NextLink, AcceptsWhitespaceAroundParameters) {
  EXPECT_EQ(next_link("<https://h/p?c=2> ;  rel = \"next\" "), std::optional<std::string>("https://h/p?c=2"));
}

TEST(NextLink, FindsNextAfterOtherLinks) {
  EXPECT_EQ(next_link(R"(<https://h/p?c=1>; rel="prev", <https://h/p?c=3>; rel="next")"),
            std::optional<std::string>("https://h/p?c=3"));
  EXPECT_EQ(next_link(R"(<https://h/first>; rel="first"; title="x", <https://h/next>; title="y"; rel="next")"),
            std::optional<std::string>("https://h/next"));
}

TEST(NextLink, FindsNextBeforeOtherLinks) {
  EXPECT_EQ(next_link(R"(<https://h/p?c=3>; rel="next", <https://h/p?c=9>; rel="last")"),
            std::optional<std::string>("https://h/p?c=3"));
  EXPECT_EQ(next_link(R"(<https://h/p?c=3>; rel=next, <https://h/p?c=9>; rel=last)"),
            std::optional<std::string>("https://h/p?c=3"));
}

TEST(NextLink, AcceptsRelWithSeveralValues) {
  EXPECT_EQ(next_link(R"(<https://h/p?c=2>; rel="prefetch next")"), std::optional<std::string>("https://h/p?c=2"));
  EXPECT_EQ(next_link(R"(<https://h/p?c=2>; rel="next prefetch")"), std::optional<std::string>("https://h/p?c=2"));
}

TEST(NextLink, IsNulloptWithoutANextLink) {
  EXPECT_EQ(next_link(""), std::nullopt);
  EXPECT_EQ(next_link(R"(<https://h/p?c=1>; rel="prev")"), std::nullopt);
  EXPECT_EQ(next_link(R"(<https://h/p?c=1>; rel="nextish")"), std::nullopt);
  EXPECT_EQ(next_link(R"(<https://h/p?c=1>; title="next")"), std::nullopt);
  EXPECT_EQ(next_link(R"(<https://h/p?c=1>)"), std::nullopt);
}

TEST(NextLink, IsNulloptForAnUnclosedTarget) {
  EXPECT_EQ(next_link(R"(<https://h/p?c=1; rel="next")"), std::nullopt);
}

}  // namespace
}  // namespace hfget::http
