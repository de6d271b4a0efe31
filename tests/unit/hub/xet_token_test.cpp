// SPDX-License-Identifier: MIT
#include "hub/xet_token.hpp"

#include <gtest/gtest.h>

#include "hfget/error.hpp"
#include "util/secrets.hpp"

namespace hfget::hub {
namespace {

http::HttpResponse answer(std::map<std::string, std::string> headers = {}) {
  http::HttpResponse response;
  response.status = 200;
  response.headers = std::move(headers);
  return response;
}

TEST(XetToken, TheUrlNamesTheRepoTypeAndTheEncodedRevision) {
  EXPECT_EQ(xet_read_token_url("https://hub.test", RepoId{RepoType::kDataset, "org/data"}, "refs/pr/1"),
            "https://hub.test/api/datasets/org/data/xet-read-token/refs%2Fpr%2F1");
}

TEST(XetToken, TheJsonBodyGivesTokenCasAndExpiry) {
  const XetAccess access = parse_xet_access(
      answer(), R"({"accessToken": "xet_token_from_body_1", "exp": 1900000000, "casUrl": "https://cas.test/"})");
  EXPECT_EQ(access.token.reveal(), "xet_token_from_body_1");
  EXPECT_EQ(access.cas_url, "https://cas.test") << "no trailing slash";
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(access.expires.time_since_epoch()).count(), 1900000000);
  EXPECT_EQ(util::redact_secrets("echo xet_token_from_body_1"), "echo ***") << "registered for redaction";
}

TEST(XetToken, TheHeadersServeWhereTheBodyIsSilent) {
  const XetAccess access = parse_xet_access(answer({{"x-xet-access-token", "xet_token_from_header"},
                                                    {"x-xet-token-expiration", "1900000001"},
                                                    {"x-xet-cas-url", "http://127.0.0.1:9/cas"}}),
                                            "{}");
  EXPECT_EQ(access.token.reveal(), "xet_token_from_header");
  EXPECT_EQ(access.cas_url, "http://127.0.0.1:9/cas");
}

TEST(XetToken, UnusableAnswersAreRefusedNamingTheField) {
  const struct {
    const char* body;
    const char* said;
  } cases[] = {
      {R"({"exp": 1900000000, "casUrl": "https://cas.test"})", "accessToken"},
      {R"({"accessToken": "", "exp": 1900000000, "casUrl": "https://cas.test"})", "accessToken"},
      {R"({"accessToken": "two words", "exp": 1900000000, "casUrl": "https://cas.test"})", "printable"},
      {R"({"accessToken": "xet_token_abc", "exp": 1900000000})", "casUrl"},
      {R"({"accessToken": "xet_token_abc", "exp": 1900000000, "casUrl": "file:///etc"})", "casUrl"},
      {R"({"accessToken": "xet_token_abc", "exp": 1900000000, "casUrl": "javascript:x"})", "casUrl"},
      {R"({"accessToken": "xet_token_abc", "casUrl": "https://cas.test"})", "exp"},
      {R"({"accessToken": "xet_token_abc", "exp": "soon", "casUrl": "https://cas.test"})", "exp"},
      {"not json", "accessToken"},
  };
  for (const auto& c : cases) {
    try {
      parse_xet_access(answer(), c.body);
      ADD_FAILURE() << "accepted " << c.body;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kNetwork);
      EXPECT_NE(std::string(error.what()).find(c.said), std::string::npos) << error.what();
    }
  }
}

TEST(XetToken, TheTokenIsFetchedOnceRefreshedNearItsExpiryAndAfterARejection) {
  auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'000'000));
  int fetched = 0;
  XetTokens tokens(
      [&] {
        ++fetched;
        XetAccess access;
        access.cas_url = "https://cas.test";
        access.token = Secret("xet_token_number_" + std::to_string(fetched));
        access.expires = now + std::chrono::seconds(300);
        return access;
      },
      std::chrono::seconds(60), [&] { return now; });
  const auto first = tokens.current();
  EXPECT_EQ(tokens.current(), first);
  EXPECT_EQ(fetched, 1);
  now += std::chrono::seconds(241);  // within the margin of its expiry
  const auto second = tokens.current();
  EXPECT_EQ(fetched, 2);
  tokens.rejected(first);  // an old token's rejection does not discard the new one
  EXPECT_EQ(tokens.current(), second);
  tokens.rejected(second);
  EXPECT_NE(tokens.current(), second);
  EXPECT_EQ(fetched, 3);
}

TEST(XetToken, AFailedFetchIsThrownAndTriedAgainNextTime) {
  int attempts = 0;
  XetTokens tokens([&]() -> XetAccess {
    if (++attempts == 1) throw Error(ErrorCode::kNetwork, "the Hub has no Xet");
    XetAccess access;
    access.cas_url = "https://cas.test";
    access.token = Secret("xet_token_after_failure");
    access.expires = std::chrono::system_clock::now() + std::chrono::hours(1);
    return access;
  });
  EXPECT_THROW(tokens.current(), Error);
  EXPECT_EQ(tokens.current()->token.reveal(), "xet_token_after_failure");
}

}  // namespace
}  // namespace hfget::hub
