// SPDX-License-Identifier: MIT
// One connection's fetch of a range, through a scripted transport instead of sockets, into a real cache
// layout in a temp dir: the Hub's redirect to the CDN and who sees the token, the shared signed URL and a
// fresh resolve when the CDN refuses it, the CDN's refusals, a file that changes between ranges, a short
// body, 416 and Retry-After. A file that publishes proves its bytes were written where they belong: its
// SHA-256 is checked. The same behaviour is tested end to end in tests/integration/test_faults.py.
#include "transfer/range_fetcher.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crypto/digest.hpp"
#include "hub/hub_urls.hpp"
#include "store/layout.hpp"
#include "support/fake_transport.hpp"
#include "support/temp_dir.hpp"
#include "transfer/connection_budget.hpp"
#include "transfer/incoming_file.hpp"
#include "transfer/publish.hpp"

namespace hfget::transfer {
namespace {

using test_support::FakeAnswer;
using test_support::FakeTransport;
using test_support::RecordedRequest;
using test_support::TempDir;

const std::string kCommit(40, 'c');
const std::string kEndpoint = "https://hub.test";
const std::string kCdn = "https://cdn.test/blob?signature=first";
const std::string kOtherCdn = "https://cdn.test/blob?signature=second";
constexpr std::size_t kFileSize = 100'000;  // several of the transport's 16 KiB pieces

std::string make_content(std::size_t size, unsigned seed) {
  std::string content(size, '\0');
  for (std::size_t i = 0; i < size; ++i) content[i] = static_cast<char>((i * 131 + seed) & 0xFF);
  return content;
}

class RecordingProgress final : public ProgressSink {
 public:
  void on_retry(const RemoteFile& /*file*/, int /*attempt*/, std::string_view reason,
                std::chrono::milliseconds delay) override {
    reasons.emplace_back(reason);
    delays.push_back(delay);
    if (stop_on_retry != nullptr) stop_on_retry->request_stop();
  }
  std::vector<std::string> reasons;
  std::vector<std::chrono::milliseconds> delays;
  std::stop_source* stop_on_retry = nullptr;
};

struct RangeFetcherTest : ::testing::Test {
  TempDir dir;
  RepoId repo{RepoType::kModel, "org/name"};
  std::unique_ptr<store::Layout> layout = store::make_cache_layout(dir.path(), repo, kCommit);
  RecordingProgress progress;
  std::string content = make_content(kFileSize, 7);
  RemoteFile file = remote_file("model.safetensors", content);
  Secret token{"hf_unit_test_token"};
  BridgeSettings settings = fetch_settings();
  std::string resolve = hub::resolve_url(kEndpoint, repo, kCommit, file.path);
  FakeTransport transport;
  std::stop_source stop;
  std::unique_ptr<IncomingFile> job;
  BridgeFile bridge_file{file};  // the bridge source's state for the file: its shared signed URL
  ConnectionBudget budget;       // where the fetcher reports the CDN's refusals

  void SetUp() override {
    layout->prepare(Snapshot{kCommit, {}}, {}, "main");
    job = std::make_unique<IncomingFile>(file, *layout, progress);
    ASSERT_TRUE(job->activate(stop.get_token()));
  }

  static RemoteFile remote_file(const std::string& path, const std::string& bytes) {
    crypto::Digest sha = crypto::Digest::sha256();
    sha.update(std::as_bytes(std::span(bytes.data(), bytes.size())));
    RemoteFile remote;
    remote.path = path;
    remote.size = bytes.size();
    remote.blob_id = std::string(40, '0');
    remote.lfs_sha256 = sha.finish_hex();
    remote.lfs_size = bytes.size();
    return remote;
  }

  BridgeSettings fetch_settings() {
    BridgeSettings fetch;
    fetch.endpoint = kEndpoint;
    fetch.token = &token;
    fetch.repo = repo;
    fetch.commit = kCommit;
    fetch.max_attempts = 3;
    fetch.retry_base_delay = std::chrono::milliseconds(1);  // backoff of a millisecond or two
    return fetch;
  }

  // Fetches [begin, end) of the file on a connection of its own; returns how far it got.
  std::uint64_t fetch(std::uint64_t begin, std::uint64_t end) {
    RangeFetcher fetcher(settings, progress, transport, http::TransportSettings{}, stop.get_token());
    RangeTask task;
    task.file = job.get();
    task.source = &bridge_file;
    task.budget = &budget;
    task.begin = begin;
    task.end = end;
    task.position = begin;
    fetcher.fetch(task);
    return task.position;
  }

  // The Error a fetch of the whole file throws (a failure of the test when none is thrown).
  Error fetch_error() {
    try {
      fetch(0, kFileSize);
    } catch (const Error& error) {
      return error;
    }
    ADD_FAILURE() << "the fetch succeeded";
    return Error(ErrorCode::kInternal, "no error");
  }

  bool published() {
    if (job->verify(stop.get_token()) != IncomingFile::Verdict::kVerified) return false;
    job->publish(publish_into(*layout));
    return true;
  }
};

std::vector<std::string> urls_of(const std::vector<RecordedRequest>& requests) {
  std::vector<std::string> urls;
  for (const RecordedRequest& request : requests) urls.push_back(request.url);
  return urls;
}

TEST_F(RangeFetcherTest, FollowsTheHubsRedirectToTheCdnAndSendsTheTokenOnlyToTheHub) {
  transport.script(resolve, {FakeAnswer::redirect(kCdn)});
  transport.script(kCdn, {FakeAnswer::ranged(content, "\"e1\"")});

  EXPECT_EQ(fetch(0, kFileSize), kFileSize);

  const std::vector<RecordedRequest> requests = transport.requests();
  ASSERT_EQ(urls_of(requests), (std::vector<std::string>{resolve, kCdn}));
  EXPECT_TRUE(requests[0].bearer);
  EXPECT_FALSE(requests[1].bearer) << "the token must never reach the CDN";
  EXPECT_EQ(requests[1].range_from, 0U);
  EXPECT_EQ(requests[1].range_last, kFileSize - 1);
  EXPECT_TRUE(published());
}

TEST_F(RangeFetcherTest, ARedirectChainKeepsTheTokenOnTheEndpointsOriginAlone) {
  const std::string hub_hop = kEndpoint + "/api/resolve-cache/models/org/name/" + kCommit + "/model.safetensors";
  const std::string other_port = "https://hub.test:8443/same-host-other-origin";
  transport.script(resolve, {FakeAnswer::redirect(hub_hop, 307)});
  transport.script(hub_hop, {FakeAnswer::redirect(other_port)});
  transport.script(other_port, {FakeAnswer::redirect(kCdn)});
  transport.script(kCdn, {FakeAnswer::ranged(content)});

  EXPECT_EQ(fetch(0, kFileSize), kFileSize);

  const std::vector<RecordedRequest> requests = transport.requests();
  ASSERT_EQ(urls_of(requests), (std::vector<std::string>{resolve, hub_hop, other_port, kCdn}));
  EXPECT_TRUE(requests[0].bearer);
  EXPECT_TRUE(requests[1].bearer) << "a redirect within the endpoint's origin keeps the token";
  EXPECT_FALSE(requests[2].bearer) << "another port is another origin";
  EXPECT_FALSE(requests[3].bearer);
  EXPECT_TRUE(published());
}

TEST_F(RangeFetcherTest, ConnectionsOfAFileShareTheSignedUrlAndResolveOnce) {
  transport.script(resolve, {FakeAnswer::redirect(kCdn)});
  transport.script(kCdn, {FakeAnswer::ranged(content, "\"e1\"")});

  EXPECT_EQ(fetch(0, kFileSize / 2), kFileSize / 2);
  EXPECT_EQ(fetch(kFileSize / 2, kFileSize), kFileSize);

  EXPECT_EQ(transport.requests_to(resolve).size(), 1U) << "the second range reused the signed URL";
  const std::vector<RecordedRequest> cdn = transport.requests_to(kCdn);
  ASSERT_EQ(cdn.size(), 2U);
  EXPECT_EQ(cdn[1].range_from, kFileSize / 2);
  EXPECT_TRUE(cdn[1].has_header("If-Range: \"e1\"")) << "the second range must not splice another version";
  EXPECT_TRUE(published());
}

TEST_F(RangeFetcherTest, ACdnThatRefusesAParallelRangeWith429IsCountedAndRetried) {
  transport.script(resolve, {FakeAnswer::redirect(kCdn)});
  transport.script(kCdn, {FakeAnswer::ranged(content), FakeAnswer::with_status(429), FakeAnswer::ranged(content)});

  EXPECT_EQ(fetch(0, kFileSize / 2), kFileSize / 2);
  EXPECT_EQ(budget.take_refusals(), 0);
  EXPECT_EQ(fetch(kFileSize / 2, kFileSize), kFileSize);

  EXPECT_EQ(budget.take_refusals(), 1) << "the scheduler lowers the file's connections on a refusal";
  EXPECT_EQ(transport.requests_to(resolve).size(), 1U) << "a 429 keeps the signed URL";
  ASSERT_EQ(progress.reasons.size(), 1U);
  EXPECT_EQ(progress.reasons[0], "HTTP 429");
  EXPECT_TRUE(published());
}

TEST_F(RangeFetcherTest, ACdnThatRefusesAParallelRangeWith403IsCountedAndResolvedAgain) {
  transport.script(resolve, {FakeAnswer::redirect(kCdn), FakeAnswer::redirect(kOtherCdn)});
  transport.script(kCdn, {FakeAnswer::ranged(content), FakeAnswer::with_status(403)});
  transport.script(kOtherCdn, {FakeAnswer::ranged(content)});

  EXPECT_EQ(fetch(0, kFileSize / 2), kFileSize / 2);
  EXPECT_EQ(fetch(kFileSize / 2, kFileSize), kFileSize);

  EXPECT_EQ(budget.take_refusals(), 1);
  EXPECT_EQ(urls_of(transport.requests()), (std::vector<std::string>{resolve, kCdn, kCdn, resolve, kOtherCdn}));
  EXPECT_TRUE(published());
}

TEST_F(RangeFetcherTest, AnExpiredSignedUrlIsResolvedAgainAndTheFileResumed) {
  // The drop forces a second request; by then the URL has expired and only a fresh resolve works.
  constexpr std::size_t kDroppedAt = 40'000;
  FakeAnswer dropped = FakeAnswer::ranged(content);
  dropped.cut_after = kDroppedAt;
  transport.script(resolve, {FakeAnswer::redirect(kCdn), FakeAnswer::redirect(kOtherCdn)});
  transport.script(kCdn, {dropped, FakeAnswer::with_status(403, {}, "<Error>Request has expired</Error>")});
  transport.script(kOtherCdn, {FakeAnswer::ranged(content)});

  EXPECT_EQ(fetch(0, kFileSize), kFileSize);

  const std::vector<RecordedRequest> requests = transport.requests();
  ASSERT_EQ(urls_of(requests), (std::vector<std::string>{resolve, kCdn, kCdn, resolve, kOtherCdn}));
  EXPECT_EQ(requests[2].range_from, kDroppedAt) << "resumed where the drop left it";
  EXPECT_TRUE(requests[3].bearer);
  EXPECT_FALSE(requests[4].bearer);
  EXPECT_EQ(requests[4].range_from, kDroppedAt);
  ASSERT_EQ(progress.reasons.size(), 2U);
  EXPECT_EQ(progress.reasons[1], "the CDN refused the signed URL (HTTP 403); resolving it again");
  EXPECT_TRUE(published());
}

TEST_F(RangeFetcherTest, AnEtagChangeBetweenRangesWritesNothingAndAsksToStartOver) {
  transport.script(resolve, {FakeAnswer::redirect(kCdn)});
  transport.script(kCdn,
                   {FakeAnswer::ranged(content, "\"old\""), FakeAnswer::ranged(make_content(kFileSize, 9), "\"new\"")});

  EXPECT_EQ(fetch(0, kFileSize / 2), kFileSize / 2);
  EXPECT_FALSE(job->restart_requested());
  // The server's If-Range check fails: it answers 200 with the whole new file.
  EXPECT_EQ(fetch(kFileSize / 2, kFileSize), kFileSize / 2) << "no byte of the new version was written";

  EXPECT_TRUE(job->restart_requested());
  EXPECT_TRUE(transport.requests_to(kCdn).at(1).has_header("If-Range: \"old\""));
}

TEST_F(RangeFetcherTest, AShortBodyIsResumedFromWhereItEnded) {
  constexpr std::size_t kShort = 30'000;
  const FakeAnswer short_body = FakeAnswer::with_status(
      206, {{"content-range", "bytes 0-" + std::to_string(kFileSize - 1) + "/" + std::to_string(kFileSize)}},
      content.substr(0, kShort));
  transport.script(resolve, {FakeAnswer::redirect(kCdn)});
  transport.script(kCdn, {short_body, FakeAnswer::ranged(content)});

  EXPECT_EQ(fetch(0, kFileSize), kFileSize);

  const std::vector<RecordedRequest> cdn = transport.requests_to(kCdn);
  ASSERT_EQ(cdn.size(), 2U);
  EXPECT_EQ(cdn[1].range_from, kShort);
  ASSERT_EQ(progress.reasons.size(), 1U);
  EXPECT_EQ(progress.reasons[0], "the body ended at byte 30000 of 100000");
  EXPECT_TRUE(published());
}

TEST_F(RangeFetcherTest, A416IsRetriedThenReportedAsANetworkFailure) {
  transport.script(resolve, {FakeAnswer::redirect(kCdn)});
  transport.script(kCdn, {FakeAnswer::with_status(416, {{"content-range", "bytes */100000"}})});

  const Error error = fetch_error();

  EXPECT_EQ(error.code(), ErrorCode::kNetwork);
  EXPECT_NE(std::string(error.what()).find("after 3 attempts"), std::string::npos) << error.what();
  EXPECT_NE(std::string(error.what()).find("cannot serve the range (HTTP 416)"), std::string::npos) << error.what();
  EXPECT_EQ(transport.requests_to(kCdn).size(), 3U) << "--retries counts 416 attempts";
  EXPECT_EQ(transport.requests_to(resolve).size(), 1U);
}

TEST_F(RangeFetcherTest, A429WithRetryAfterIsRetriedAndTheWaitNamed) {
  transport.script(resolve, {FakeAnswer::redirect(kCdn)});
  transport.script(kCdn, {FakeAnswer::with_status(429, {{"retry-after", "0"}}), FakeAnswer::ranged(content)});

  EXPECT_EQ(fetch(0, kFileSize), kFileSize);

  ASSERT_EQ(progress.reasons.size(), 1U);
  EXPECT_EQ(progress.reasons[0], "HTTP 429 (rate limited: the server asks to wait 0s (Retry-After))");
  EXPECT_EQ(budget.take_refusals(), 1);
  EXPECT_TRUE(published());
}

TEST_F(RangeFetcherTest, A429WaitsAtLeastTheRetryAfterItAsksFor) {
  // A stop during the wait ends it at once: the delay is checked without waiting 30 s.
  progress.stop_on_retry = &stop;
  transport.script(resolve, {FakeAnswer::redirect(kCdn)});
  transport.script(kCdn, {FakeAnswer::with_status(429, {{"retry-after", "30"}})});

  EXPECT_EQ(fetch_error().code(), ErrorCode::kInterrupted);

  ASSERT_EQ(progress.delays.size(), 1U);
  EXPECT_GE(progress.delays[0], std::chrono::seconds(30));
  EXPECT_EQ(transport.requests_to(kCdn).size(), 1U);
}

TEST_F(RangeFetcherTest, TheHubsOwnRefusalIsNotRetried) {
  transport.script(resolve, {FakeAnswer::with_status(403, {{"x-error-code", "GatedRepo"}})});

  const Error error = fetch_error();

  EXPECT_EQ(error.code(), ErrorCode::kAccessDenied) << error.what();
  EXPECT_EQ(transport.requests().size(), 1U);
}

}  // namespace
}  // namespace hfget::transfer
