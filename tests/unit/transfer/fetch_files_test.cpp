// SPDX-License-Identifier: MIT
// The fetch stage end to end but without sockets: fetch_files with the bridge source over a scripted
// transport (every connection sends through it), into a real cache layout in a temp dir. Several
// connections on one file, a CDN that refuses parallel ranges, a file that changes between ranges, an
// expired signed URL, a 416; a published file proves its bytes (its SHA-256 is checked on the way).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "crypto/digest.hpp"
#include "hub/hub_urls.hpp"
#include "store/layout.hpp"
#include "support/fake_transport.hpp"
#include "support/temp_dir.hpp"
#include "transfer/bridge_source.hpp"
#include "transfer/fetch_all.hpp"
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
constexpr std::uint64_t kKiB = 1024;

std::string make_content(std::size_t size, unsigned seed) {
  std::string content(size, '\0');
  for (std::size_t i = 0; i < size; ++i) content[i] = static_cast<char>((i * 131 + seed) & 0xFF);
  return content;
}

// A CDN that serves one range of a file at a time: a request that arrives while another is in flight is
// refused (429, or 403 as if the signed URL were not valid for it; CDNs that limit connections per file answer
// either), three times at most, so that a retry's random
// backoff cannot use up the attempts. The first request is held until a second one arrives (at most a
// minute), so at least one refusal always happens. Every connection sends through it.
class OneRangeAtATimeCdn {
 public:
  OneRangeAtATimeCdn(FakeTransport& scripted, long refusal_status) : scripted_(scripted), status_(refusal_status) {}

  http::HttpResponse get(const http::RequestSpec& spec, http::BodySink& sink, const std::stop_token& stop) {
    if (spec.url != kCdn) return scripted_.get(spec, sink, stop);
    {
      std::unique_lock lock(mutex_);
      ++requests_;
      changed_.notify_all();
      if (in_flight_ > 0 && refused_ < 3) {
        ++refused_;
        http::HttpResponse refusal;
        refusal.status = status_;
        return refusal;
      }
      ++in_flight_;
      if (requests_ == 1) changed_.wait_for(lock, std::chrono::seconds(60), [this] { return requests_ > 1; });
    }
    http::HttpResponse response = scripted_.get(spec, sink, stop);
    const std::lock_guard lock(mutex_);
    --in_flight_;
    return response;
  }
  int refused() const {
    const std::lock_guard lock(mutex_);
    return refused_;
  }

 private:
  FakeTransport& scripted_;
  long status_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int requests_ = 0;
  int in_flight_ = 0;
  int refused_ = 0;
};

class RecordingProgress final : public ProgressSink {
 public:
  void on_retry(const RemoteFile& /*file*/, int /*attempt*/, std::string_view reason,
                std::chrono::milliseconds /*delay*/) override {
    const std::lock_guard lock(mutex);
    reasons.emplace_back(reason);
  }
  std::vector<std::string> retry_reasons() {
    const std::lock_guard lock(mutex);
    return reasons;
  }
  std::mutex mutex;
  std::vector<std::string> reasons;
};

struct FetchFilesTest : ::testing::Test {
  TempDir dir;
  RepoId repo{RepoType::kModel, "org/name"};
  std::unique_ptr<store::Layout> layout = store::make_cache_layout(dir.path(), repo, kCommit);
  RecordingProgress progress;
  Secret token{"hf_unit_test_token"};
  FakeTransport transport;
  std::vector<PlannedFile> plan;
  std::map<std::string, std::string> contents;

  void SetUp() override { layout->prepare(Snapshot{kCommit, {}}, {}, "main"); }

  RemoteFile add_file(const std::string& path, const std::string& content, bool lfs = true) {
    crypto::Digest sha = crypto::Digest::sha256();
    sha.update(std::as_bytes(std::span(content.data(), content.size())));
    RemoteFile file;
    file.path = path;
    file.size = content.size();
    if (lfs) {
      file.blob_id = std::string(40, '0');
      file.lfs_sha256 = sha.finish_hex();
      file.lfs_size = content.size();
    } else {
      crypto::GitBlobSha1 git(content.size());
      git.update(std::as_bytes(std::span(content.data(), content.size())));
      file.blob_id = git.finish_hex();
    }
    plan.push_back({file, false, false});
    contents[path] = content;
    return file;
  }

  std::string resolve(const RemoteFile& file) const { return hub::resolve_url(kEndpoint, repo, kCommit, file.path); }

  BridgeSettings bridge_settings() const {
    BridgeSettings bridge;
    bridge.endpoint = kEndpoint;
    bridge.token = &token;
    bridge.repo = repo;
    bridge.commit = kCommit;
    bridge.max_attempts = 5;
    bridge.retry_base_delay = std::chrono::milliseconds(1);
    return bridge;
  }

  static FetchSettings fetch_settings(std::size_t connections, std::uint64_t chunk_bytes) {
    FetchSettings settings;
    settings.connections = connections;
    settings.chunks = {12, chunk_bytes, chunk_bytes / 4};
    settings.file = IncomingFileSettings{false, 3, std::chrono::milliseconds(0)};
    return settings;
  }

  template <typename Shared>
  FetchResults fetch(Shared& shared, const FetchSettings& settings) {
    BridgeSource source(
        bridge_settings(), http::TransportSettings{},
        [&shared] { return std::make_unique<test_support::LentTransport<Shared>>(shared); }, progress);
    return fetch_files(plan, settings, source, *layout, publish_into(*layout), progress, {});
  }

  std::string blob(const RemoteFile& file) const {
    std::ifstream in(dir.path() / "models--org--name" / "blobs" / file.etag(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

TEST_F(FetchFilesTest, ManyConnectionsFetchTwoFilesThroughTheRedirectAndTheTokenStaysOnTheHub) {
  const RemoteFile model = add_file("model.safetensors", make_content(400 * kKiB, 3));
  const RemoteFile config = add_file("config.json", make_content(3000, 5), /*lfs=*/false);
  transport.script(resolve(model), {FakeAnswer::redirect(kCdn)});
  transport.script(kCdn, {FakeAnswer::ranged(contents[model.path], "\"m1\"")});
  transport.script(resolve(config), {FakeAnswer::ranged(contents[config.path], "\"c1\"")});

  const FetchResults results = fetch(transport, fetch_settings(4, 64 * kKiB));

  EXPECT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_FALSE(results.errors[1].has_value()) << results.errors[1]->what();
  EXPECT_EQ(results.files_fetched, 2U);
  EXPECT_EQ(blob(model), contents[model.path]);
  EXPECT_EQ(transport.requests_to(resolve(model)).size(), 1U) << "the file's connections share one resolve";
  EXPECT_GE(transport.requests_to(kCdn).size(), 7U) << "400 KiB in 64 KiB chunks, some split for idle connections";
  for (const RecordedRequest& request : transport.requests()) {
    EXPECT_EQ(request.bearer, request.url.rfind(kEndpoint + "/", 0) == 0) << request.url;
  }
}

TEST_F(FetchFilesTest, ACdnThatRefusesParallelRangesIsRetriedAndTheFileCompletes) {
  const RemoteFile model = add_file("model.safetensors", make_content(512 * kKiB, 3));
  transport.script(resolve(model), {FakeAnswer::redirect(kCdn)});
  transport.script(kCdn, {FakeAnswer::ranged(contents[model.path], "\"m1\"")});
  OneRangeAtATimeCdn cdn(transport, 429);

  const FetchResults results = fetch(cdn, fetch_settings(4, 64 * kKiB));

  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(model), contents[model.path]);
  EXPECT_GE(cdn.refused(), 1);
  const std::vector<std::string> reasons = progress.retry_reasons();
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "HTTP 429"), reasons.end());
}

TEST_F(FetchFilesTest, ACdnThatRefusesParallelRangesWith403IsResolvedAgainAndTheFileCompletes) {
  const RemoteFile model = add_file("model.safetensors", make_content(512 * kKiB, 3));
  transport.script(resolve(model), {FakeAnswer::redirect(kCdn)});
  transport.script(kCdn, {FakeAnswer::ranged(contents[model.path], "\"m1\"")});
  OneRangeAtATimeCdn cdn(transport, 403);

  const FetchResults results = fetch(cdn, fetch_settings(4, 64 * kKiB));

  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(model), contents[model.path]);
  EXPECT_GE(cdn.refused(), 1);
  EXPECT_GE(transport.requests_to(resolve(model)).size(), 2U) << "a refused signed URL is asked for again";
  for (const RecordedRequest& request : transport.requests_to(kCdn)) EXPECT_FALSE(request.bearer);
}

TEST_F(FetchFilesTest, AFileThatChangesBetweenRangesStartsOverAndCompletes) {
  // The same bytes uploaded again under another ETag: nothing of the two versions is spliced.
  const RemoteFile model = add_file("model.safetensors", make_content(256 * kKiB, 3));
  transport.script(resolve(model), {FakeAnswer::redirect(kCdn)});
  transport.script(
      kCdn, {FakeAnswer::ranged(contents[model.path], "\"old\""), FakeAnswer::ranged(contents[model.path], "\"new\"")});

  const FetchResults results = fetch(transport, fetch_settings(1, 64 * kKiB));

  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(model), contents[model.path]);
  const std::vector<RecordedRequest> cdn = transport.requests_to(kCdn);
  ASSERT_EQ(cdn.size(), 6U) << "one range of the old version, the refused one, then four of the new";
  EXPECT_TRUE(cdn[1].has_header("If-Range: \"old\""));
  EXPECT_EQ(cdn[2].range_from, 0U) << "started over from the first byte";
  EXPECT_FALSE(cdn[2].has_header("If-Range: \"old\""));
  EXPECT_GT(results.bytes_received, model.size) << "the first version's range was received, then discarded";
}

TEST_F(FetchFilesTest, AnExpiredSignedUrlIsResolvedAgainOnceForTheFilesConnections) {
  const RemoteFile model = add_file("model.safetensors", make_content(256 * kKiB, 3));
  transport.script(resolve(model), {FakeAnswer::redirect(kCdn), FakeAnswer::redirect(kOtherCdn)});
  transport.script(kCdn, {FakeAnswer::ranged(contents[model.path]),
                          FakeAnswer::with_status(403, {}, "<Error>Request has expired</Error>")});
  transport.script(kOtherCdn, {FakeAnswer::ranged(contents[model.path])});

  const FetchResults results = fetch(transport, fetch_settings(1, 64 * kKiB));

  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(model), contents[model.path]);
  EXPECT_EQ(transport.requests_to(resolve(model)).size(), 2U);
  EXPECT_EQ(transport.requests_to(kCdn).size(), 2U);
  EXPECT_EQ(transport.requests_to(kOtherCdn).size(), 3U) << "the rest of the file from the new URL";
}

TEST_F(FetchFilesTest, A416FailsItsFileAndTheOthersArePublished) {
  const RemoteFile broken = add_file("broken.safetensors", make_content(100 * kKiB, 3));
  const RemoteFile model = add_file("model.safetensors", make_content(100 * kKiB, 4));
  transport.script(resolve(broken), {FakeAnswer::redirect(kOtherCdn)});
  transport.script(kOtherCdn, {FakeAnswer::with_status(416, {{"content-range", "bytes */10"}})});
  transport.script(resolve(model), {FakeAnswer::redirect(kCdn)});
  transport.script(kCdn, {FakeAnswer::ranged(contents[model.path])});

  const FetchResults results = fetch(transport, fetch_settings(2, 1 << 20));

  ASSERT_TRUE(results.errors[0].has_value());
  EXPECT_EQ(results.errors[0]->code(), ErrorCode::kNetwork);
  EXPECT_NE(std::string(results.errors[0]->what()).find("(HTTP 416)"), std::string::npos) << results.errors[0]->what();
  EXPECT_FALSE(results.errors[1].has_value());
  EXPECT_EQ(blob(model), contents[model.path]);
  EXPECT_EQ(results.files_fetched, 1U);
}

TEST_F(FetchFilesTest, TheConnectionCountChangesWhileTheDownloadRuns) {
  for (unsigned i = 0; i < 8; ++i) {
    const RemoteFile file = add_file("shard" + std::to_string(i) + ".safetensors", make_content(64 * kKiB, i));
    const std::string cdn = "https://cdn.test/shard" + std::to_string(i);
    transport.script(resolve(file), {FakeAnswer::redirect(cdn)});
    transport.script(cdn, {FakeAnswer::ranged(contents[file.path])});
  }
  FetchSettings settings = fetch_settings(2, 16 * kKiB);
  std::size_t started_after_raise = 0;
  settings.on_started = [&](ConnectionPool& pool) {
    pool.set_connections(1);
    pool.set_connections(5);
    started_after_raise = pool.threads_started();
  };

  const FetchResults results = fetch(transport, settings);

  EXPECT_EQ(started_after_raise, 5U);
  EXPECT_EQ(results.files_fetched, 8U);
  for (const PlannedFile& planned : plan) EXPECT_EQ(blob(planned.file), contents[planned.file.path]);
}

}  // namespace
}  // namespace hfget::transfer
