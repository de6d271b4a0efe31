// SPDX-License-Identifier: MIT
// The Hub client through a scripted transport: which host sees the token along a redirect chain, the
// retries of a 429 and of 5xx, the tree listing's pages, and the access check that takes the CDN redirect
// as its answer. The same behaviour is tested end to end in tests/integration (test_auth.py,
// test_pagination.py, test_faults.py).
#include "hub/hub_client.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hfget/error.hpp"
#include "hub/hub_urls.hpp"
#include "support/fake_transport.hpp"

namespace hfget::hub {
namespace {

using test_support::FakeAnswer;
using test_support::FakeTransport;
using test_support::RecordedRequest;

const std::string kEndpoint = "https://hub.test";
const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
const std::string kOid = "ce013625030ba8dba906f756967f9e9ca394464a";

std::string revision_json() {
  return R"({"id": "org/name", "sha": ")" + kCommit + R"(", "siblings": []})";
}

std::string tree_json(const std::string& path) {
  return R"([{"type": "file", "path": ")" + path + R"(", "size": 6, "oid": ")" + kOid + R"("}])";
}

struct HubClientTest : ::testing::Test {
  RepoId repo{RepoType::kModel, "org/name"};
  FakeTransport transport;
  std::stop_source stop;

  HubClient client() {
    HubConnection settings;
    settings.endpoint = kEndpoint;
    settings.token = Secret("hf_unit_test_token");
    settings.max_attempts = 3;
    settings.retry_base_delay = std::chrono::milliseconds(1);  // backoff of a millisecond or two
    return HubClient(std::move(settings), transport, stop.get_token());
  }
};

TEST_F(HubClientTest, ARedirectChainKeepsTheTokenOnTheEndpointsOriginAlone) {
  const std::string asked = revision_info_url(kEndpoint, repo, "main");
  const std::string renamed = revision_info_url(kEndpoint, RepoId{RepoType::kModel, "org/renamed"}, "main");
  const std::string mirror = "https://mirror.test/api/models/org/renamed/revision/main";
  transport.script(asked, {FakeAnswer::redirect(renamed, 307)});
  transport.script(renamed, {FakeAnswer::redirect(mirror, 307)});
  transport.script(mirror, {FakeAnswer::json(revision_json())});

  EXPECT_EQ(client().revision_info(repo, "main").commit, kCommit);

  const std::vector<RecordedRequest> requests = transport.requests();
  ASSERT_EQ(requests.size(), 3U);
  EXPECT_TRUE(requests[0].bearer);
  EXPECT_TRUE(requests[1].bearer) << "a redirect within the endpoint's origin keeps the token";
  EXPECT_FALSE(requests[2].bearer) << "the token must never leave the endpoint's origin";
  EXPECT_EQ(requests[2].url, mirror);
}

TEST_F(HubClientTest, A429WithRetryAfterIsRetried) {
  const std::string asked = revision_info_url(kEndpoint, repo, "main");
  transport.script(asked, {FakeAnswer::with_status(429, {{"retry-after", "0"}}, R"({"error": "slow down"})"),
                           FakeAnswer::json(revision_json())});

  EXPECT_EQ(client().resolve_commit(repo, "main"), kCommit);
  EXPECT_EQ(transport.requests_to(asked).size(), 2U);
}

TEST_F(HubClientTest, ServerErrorsUseUpTheRetriesAndNameTheStatus) {
  const std::string asked = revision_info_url(kEndpoint, repo, "main");
  transport.script(asked, {FakeAnswer::with_status(503)});

  try {
    client().revision_info(repo, "main");
    ADD_FAILURE() << "a Hub that answers 503 every time was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("503"), std::string::npos) << error.what();
  }
  EXPECT_EQ(transport.requests_to(asked).size(), 3U) << "max_attempts 3";
}

TEST_F(HubClientTest, AFailureToConnectOnFirstContactIsNotRetried) {
  // Nothing is scripted: the fake refuses the connection.
  try {
    client().revision_info(repo, "main");
    ADD_FAILURE() << "accepted without an answer";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kNetwork);
    EXPECT_NE(std::string(error.what()).find("not retried"), std::string::npos) << error.what();
  }
  EXPECT_EQ(transport.requests().size(), 1U);
}

TEST_F(HubClientTest, TheTreeListingFollowsNextPageLinks) {
  const std::string first = tree_url(kEndpoint, repo, kCommit);
  const std::string second = kEndpoint + "/api/models/org/name/tree/" + kCommit + "?recursive=true&cursor=page2";
  transport.script(first, {FakeAnswer::json(tree_json("a.txt"), {{"link", "<" + second + R"(>; rel="next")"}})});
  transport.script(second, {FakeAnswer::json(tree_json("b.txt"))});

  const std::vector<RemoteFile> files = client().list_files(repo, kCommit);

  ASSERT_EQ(files.size(), 2U);
  EXPECT_EQ(files[0].path, "a.txt");
  EXPECT_EQ(files[1].path, "b.txt");
  EXPECT_TRUE(transport.requests_to(second).at(0).bearer);
}

TEST_F(HubClientTest, ATreePageOnAnotherHostIsRefusedWithoutARequest) {
  const std::string first = tree_url(kEndpoint, repo, kCommit);
  const std::string elsewhere = "https://elsewhere.test/tree?cursor=2";
  transport.script(first, {FakeAnswer::json(tree_json("a.txt"), {{"link", "<" + elsewhere + R"(>; rel="next")"}})});

  EXPECT_THROW(client().list_files(repo, kCommit), Error);
  EXPECT_TRUE(transport.requests_to(elsewhere).empty());
}

TEST_F(HubClientTest, TheAccessCheckTakesTheRedirectToTheCdnAsItsAnswer) {
  const std::string resolve = resolve_url(kEndpoint, repo, kCommit, "model.safetensors");
  transport.script(resolve, {FakeAnswer::redirect("https://cdn.test/blob?signature=1")});

  client().check_file_access(repo, kCommit, "model.safetensors");

  const std::vector<RecordedRequest> requests = transport.requests();
  ASSERT_EQ(requests.size(), 1U) << "the redirect is not followed";
  EXPECT_TRUE(requests[0].bearer);
  EXPECT_EQ(requests[0].range_from, 0U);
  EXPECT_EQ(requests[0].range_last, 0U);
}

TEST_F(HubClientTest, AGatedRepoIsRefusedAtTheAccessCheck) {
  const std::string resolve = resolve_url(kEndpoint, repo, kCommit, "model.safetensors");
  transport.script(resolve, {FakeAnswer::with_status(403, {{"x-error-code", "GatedRepo"}})});

  try {
    client().check_file_access(repo, kCommit, "model.safetensors");
    ADD_FAILURE() << "a gated repo's contents were taken as readable";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kAccessDenied) << error.what();
  }
  EXPECT_EQ(transport.requests().size(), 1U) << "a refusal is not retried";
}

}  // namespace
}  // namespace hfget::hub
