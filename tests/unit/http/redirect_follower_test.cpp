// SPDX-License-Identifier: MIT
// The redirect rules every caller shares, through a scripted transport: which host sees the token across
// a chain, which targets are refused, how many redirects are followed, and what each hop is reported as.
#include "http/redirect_follower.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "support/fake_transport.hpp"

namespace hfget::http {
namespace {

using test_support::FakeAnswer;
using test_support::FakeTransport;
using test_support::RecordedRequest;

const std::string kEndpoint = "https://hub.test";

struct RecordingObserver final : HopObserver {
  void before_request(RequestSpec& spec, bool to_the_endpoint) override {
    before.emplace_back(spec.url, to_the_endpoint);
    if (to_the_endpoint) spec.extra_headers.emplace_back("X-Hop: hub");
  }
  void on_redirect(const std::string& target, bool to_the_endpoint) override {
    redirects.emplace_back(target, to_the_endpoint);
  }
  std::vector<std::pair<std::string, bool>> before;
  std::vector<std::pair<std::string, bool>> redirects;
};

struct RedirectFollowerTest : ::testing::Test {
  FakeTransport transport;
  Secret token{"hf_unit_test_token"};
  RedirectFollower follower{transport, kEndpoint, &token};
  StringSink sink{1024};

  FollowedAnswer get(const std::string& url, HopObserver& observer) {
    RequestSpec spec;
    spec.url = url;
    return follower.get(spec, sink, {}, observer);
  }
  FollowedAnswer get(const std::string& url) {
    HopObserver nothing;
    return get(url, nothing);
  }
};

TEST_F(RedirectFollowerTest, TheTokenGoesOnlyToTheEndpointsOriginAcrossAHubHubCdnCdnChain) {
  const std::string first = kEndpoint + "/org/name/resolve/main/model.safetensors";
  const std::string hub_hop = kEndpoint + "/api/resolve-cache/model.safetensors";
  const std::string cdn = "https://cdn.test/blob?signature=1";
  const std::string cdn_hop = "https://cdn-eu.test/blob?signature=1";
  transport.script(first, {FakeAnswer::redirect(hub_hop, 307)});
  transport.script(hub_hop, {FakeAnswer::redirect(cdn)});
  transport.script(cdn, {FakeAnswer::redirect(cdn_hop)});
  transport.script(cdn_hop, {FakeAnswer::with_status(200, {}, "bytes")});
  RecordingObserver observer;

  const FollowedAnswer answer = get(first, observer);

  EXPECT_EQ(answer.outcome, RedirectOutcome::kAnswered);
  EXPECT_EQ(answer.response.status, 200);
  EXPECT_EQ(answer.url, cdn_hop);
  EXPECT_EQ(sink.text(), "bytes");
  const std::vector<RecordedRequest> requests = transport.requests();
  ASSERT_EQ(requests.size(), 4U);
  EXPECT_TRUE(requests[0].bearer);
  EXPECT_TRUE(requests[1].bearer) << "a redirect within the endpoint's origin keeps the token";
  EXPECT_FALSE(requests[2].bearer) << "the token must never reach the CDN";
  EXPECT_FALSE(requests[3].bearer);
  EXPECT_TRUE(requests[1].has_header("X-Hop: hub"));
  EXPECT_FALSE(requests[2].has_header("X-Hop: hub")) << "what a hop added is not carried to the next origin";
  EXPECT_EQ(observer.redirects,
            (std::vector<std::pair<std::string, bool>>{{hub_hop, true}, {cdn, false}, {cdn_hop, false}}));
  EXPECT_EQ(observer.before.size(), 4U);
}

TEST_F(RedirectFollowerTest, AnotherPortOrSchemeOfTheSameHostIsAnotherOrigin) {
  const std::string first = kEndpoint + "/a";
  const std::string other_port = "https://hub.test:8443/b";
  const std::string plain_http = "http://hub.test/c";
  transport.script(first, {FakeAnswer::redirect(other_port)});
  transport.script(other_port, {FakeAnswer::redirect(plain_http)});
  transport.script(plain_http, {FakeAnswer::with_status(200)});

  EXPECT_EQ(get(first).outcome, RedirectOutcome::kAnswered);

  const std::vector<RecordedRequest> requests = transport.requests();
  ASSERT_EQ(requests.size(), 3U);
  EXPECT_TRUE(requests[0].bearer);
  EXPECT_FALSE(requests[1].bearer);
  EXPECT_FALSE(requests[2].bearer);
}

TEST_F(RedirectFollowerTest, ARedirectToAnotherSchemeIsRefusedWithoutARequest) {
  const std::string first = kEndpoint + "/a";
  transport.script(first, {FakeAnswer::redirect("file:///etc/passwd")});

  const FollowedAnswer answer = get(first);

  EXPECT_EQ(answer.outcome, RedirectOutcome::kBadScheme);
  EXPECT_EQ(answer.url, first);
  EXPECT_EQ(transport.requests().size(), 1U);
}

TEST_F(RedirectFollowerTest, StopsAfterTenRedirects) {
  for (int i = 0; i < 20; ++i) {
    transport.script(kEndpoint + "/hop" + std::to_string(i),
                     {FakeAnswer::redirect(kEndpoint + "/hop" + std::to_string(i + 1))});
  }

  const FollowedAnswer answer = get(kEndpoint + "/hop0");

  EXPECT_EQ(answer.outcome, RedirectOutcome::kTooManyRedirects);
  EXPECT_EQ(transport.requests().size(), 11U) << "the first request and ten redirects";
}

TEST_F(RedirectFollowerTest, FollowsTheAbsoluteUrlTheTransportMadeOfARelativeLocation) {
  // The transport resolves "Location: /other" against the request's URL; the follower requests exactly that.
  const std::string first = kEndpoint + "/api/models/org/name/revision/main";
  const std::string resolved = kEndpoint + "/other";
  transport.script(first, {FakeAnswer::redirect(resolved, 301)});
  transport.script(resolved, {FakeAnswer::json("{}")});

  const FollowedAnswer answer = get(first);

  EXPECT_EQ(answer.outcome, RedirectOutcome::kAnswered);
  EXPECT_EQ(answer.url, resolved);
  const std::vector<RecordedRequest> requests = transport.requests();
  ASSERT_EQ(requests.size(), 2U);
  EXPECT_EQ(requests[1].url, resolved);
  EXPECT_TRUE(requests[1].bearer);
}

TEST_F(RedirectFollowerTest, AFailureOrANonRedirectEndsTheChain) {
  const std::string first = kEndpoint + "/a";
  transport.script(first, {FakeAnswer::failing(TransportFailure::kConnectionLost)});

  const FollowedAnswer answer = get(first);

  EXPECT_EQ(answer.outcome, RedirectOutcome::kAnswered);
  EXPECT_EQ(answer.response.failure, TransportFailure::kConnectionLost);
  EXPECT_EQ(transport.requests().size(), 1U);
}

}  // namespace
}  // namespace hfget::http
