// SPDX-License-Identifier: MIT
// The Xet source end to end but without sockets: fetch_files with the Xet source over a scripted CAS (it
// computes the reconstruction of whatever byte range is asked, V1 only, as a CAS without V2) and scripted xorb
// URLs, into a real cache layout. The file is cut into 16 KiB chunks stored in two xorbs, one chunk LZ4-framed;
// tests break one thing each (a flipped header byte, an expired URL, a rejected token, a body cut short, a CAS
// that is down) and check that the published file is byte-identical and which host saw which token.
#include "transfer/xet_source.hpp"

#include <gtest/gtest.h>
#include <lz4frame.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "crypto/digest.hpp"
#include "hub/hub_urls.hpp"
#include "store/chunk_layout_records.hpp"
#include "store/layout.hpp"
#include "support/fake_transport.hpp"
#include "support/temp_dir.hpp"
#include "transfer/fetch_all.hpp"
#include "transfer/publish.hpp"
#include "util/read_text_file.hpp"

namespace hfget::transfer {
namespace {

using test_support::FakeAnswer;
using test_support::FakeTransport;
using test_support::RecordedRequest;
using test_support::TempDir;

const std::string kCommit(40, 'c');
const std::string kEndpoint = "https://hub.test";
const std::string kCas = "https://cas.test";
const std::string kCdn = "https://cdn.test/blob?signature=bridge";
const std::string kXetHash(64, 'a');
constexpr std::size_t kChunk = 16 * 1024;
constexpr std::size_t kChunks = 24;  // 12 in each xorb
constexpr std::size_t kKiB = 1024;

std::string make_content(std::size_t size) {
  std::string content(size, '\0');
  for (std::size_t i = 0; i < size; ++i) content[i] = static_cast<char>((i * 131 + i / 4096) & 0xFF);
  return content;
}

void put_u24(std::string& out, std::size_t value) {
  for (int shift = 0; shift < 24; shift += 8) out.push_back(static_cast<char>((value >> shift) & 0xFF));
}

std::string lz4_frame(const std::string& data) {
  std::string frame(LZ4F_compressFrameBound(data.size(), nullptr), '\0');
  const std::size_t size = LZ4F_compressFrame(frame.data(), frame.size(), data.data(), data.size(), nullptr);
  EXPECT_FALSE(LZ4F_isError(size));
  frame.resize(size);
  return frame;
}

// A CAS and its xorb store for one file: chunk i of the file is chunk i % 12 of xorb i / 12.
class FakeCas {
 public:
  explicit FakeCas(const std::string& content) : content_(content) {
    for (std::size_t x = 0; x < 2; ++x) {
      std::string& xorb = xorbs_[x];
      for (std::size_t c = 0; c < kChunks / 2; ++c) {
        offsets_[x].push_back(xorb.size());
        const std::string data = content.substr((x * kChunks / 2 + c) * kChunk, kChunk);
        const bool compressed = c == 3;  // one LZ4 frame among stored chunks
        const std::string payload = compressed ? lz4_frame(data) : data;
        xorb.push_back('\0');
        put_u24(xorb, payload.size());
        xorb.push_back(compressed ? '\1' : '\0');
        put_u24(xorb, data.size());
        xorb += payload;
      }
      offsets_[x].push_back(xorb.size());
    }
  }

  std::size_t xorb_bytes() const { return xorbs_[0].size() + xorbs_[1].size(); }

  static std::string xorb_hash(std::size_t x) { return std::string(64, x == 0 ? 'b' : 'd'); }

  http::HttpResponse get(const http::RequestSpec& spec, http::BodySink& sink, const std::stop_token& stop) {
    const bool to_cas = spec.url.rfind(kCas + "/", 0) == 0;
    const bool to_xorbs = spec.url.rfind("https://xorbs.test/", 0) == 0;
    if (!to_cas && !to_xorbs) return scripted.get(spec, sink, stop);
    {
      const std::lock_guard lock(mutex_);
      requests_.push_back({spec.url, spec.bearer_token != nullptr && !spec.bearer_token->empty(), spec.range_from,
                           spec.range_last, spec.extra_headers});
    }
    if (to_cas) return reconstruction(spec, sink);
    for (std::size_t x = 0; x < 2; ++x) {
      if (spec.url.rfind("https://xorbs.test/" + xorb_hash(x), 0) == 0) return xorb(x, spec, sink);
    }
    return status(404);
  }

  std::vector<RecordedRequest> requests() const {
    std::vector<RecordedRequest> all = scripted.requests();
    const std::lock_guard lock(mutex_);
    all.insert(all.end(), requests_.begin(), requests_.end());
    return all;
  }

  FakeTransport scripted;             // the bridge (Hub and CDN)
  std::map<std::string, int> faults;  // what to break, how many times
  int reconstructions = 0;
  std::atomic<int> stopped_at_the_last_byte{0};
  std::chrono::milliseconds xorb_delay{0};  // before each xorb body: a download slow enough to ask ahead in

 private:
  bool take_fault(const std::string& name) {
    const std::lock_guard lock(mutex_);
    auto it = faults.find(name);
    if (it == faults.end() || it->second == 0) return false;
    --it->second;
    return true;
  }

  http::HttpResponse reconstruction(const http::RequestSpec& spec, http::BodySink& sink) {
    if (take_fault("cas_down")) {
      http::HttpResponse down;
      down.failure = http::TransportFailure::kConnect;
      return down;
    }
    if (spec.url.find("/v2/") != std::string::npos) return status(404);
    if (take_fault("token_401")) return status(401);
    std::string signature;
    {
      const std::lock_guard lock(mutex_);
      signature = std::to_string(++reconstructions);
      signatures_.insert(signature);  // valid until an expired_url fault revokes it
    }
    // A CAS (or a proxy before it) that ignores the Range: the whole file's reconstruction for a range past
    // byte 0 (for one at 0 that is a right answer, and the range grows to take all of it).
    const bool whole = faults.count("ignore_range") != 0 && spec.range_from.value_or(0) > 0;
    const std::uint64_t first = whole ? 0 : spec.range_from.value_or(0);
    const std::uint64_t last =
        whole ? content_.size() - 1
              : std::min<std::uint64_t>(spec.range_last.value_or(content_.size() - 1), content_.size() - 1);
    const std::size_t first_chunk = first / kChunk;
    const std::size_t end_chunk = last / kChunk + 1;
    nlohmann::json terms = nlohmann::json::array();
    nlohmann::json fetch_info = nlohmann::json::object();
    for (std::size_t x = 0; x < 2; ++x) {
      const std::size_t begin = std::max(first_chunk, x * kChunks / 2);
      const std::size_t end = std::min(end_chunk, (x + 1) * kChunks / 2);
      if (begin >= end) continue;
      const std::size_t local_begin = begin - x * kChunks / 2;
      const std::size_t local_end = end - x * kChunks / 2;
      const std::uint64_t unpacked = std::min<std::uint64_t>(end * kChunk, content_.size()) - begin * kChunk;
      terms.push_back({{"hash", xorb_hash(x)},
                       {"unpacked_length", unpacked},
                       {"range", {{"start", local_begin}, {"end", local_end}}}});
      fetch_info[xorb_hash(x)] = nlohmann::json::array(
          {{{"url", "https://xorbs.test/" + xorb_hash(x) + "?sig=" + signature},
            {"url_range", {{"start", offsets_[x][local_begin]}, {"end", offsets_[x][local_end] - 1}}},
            {"range", {{"start", local_begin}, {"end", local_end}}}}});
    }
    const nlohmann::json answer = {
        {"offset_into_first_range", first - first_chunk * kChunk}, {"terms", terms}, {"fetch_info", fetch_info}};
    return deliver(200, {}, answer.dump(), sink, std::nullopt);
  }

  http::HttpResponse xorb(std::size_t x, const http::RequestSpec& spec, http::BodySink& sink) {
    const std::string signature = spec.url.substr(spec.url.find("?sig=") + 5);
    if (take_fault("expired_url")) {
      const std::lock_guard lock(mutex_);
      signatures_.erase(signature);
    }
    {
      const std::lock_guard lock(mutex_);
      if (signatures_.count(signature) == 0) return status(403);  // expired, or never handed out
    }
    if (xorb_delay.count() > 0) std::this_thread::sleep_for(xorb_delay);
    const std::uint64_t from = spec.range_from.value_or(0);
    const std::uint64_t last = spec.range_last.value_or(xorbs_[x].size() - 1);
    std::string body = xorbs_[x].substr(from, last + 1 - from);
    if (take_fault("bad_header")) body[0] = '\x07';  // chunk format version 7
    const std::optional<std::size_t> cut = take_fault("cut_body") ? std::optional(kChunk + 100) : std::nullopt;
    return deliver(206,
                   {{"content-range", "bytes " + std::to_string(from) + "-" + std::to_string(last) + "/" +
                                          std::to_string(xorbs_[x].size())}},
                   body, sink, cut);
  }

  http::HttpResponse deliver(long code, std::map<std::string, std::string> headers, const std::string& body,
                             http::BodySink& sink, std::optional<std::size_t> cut_after) {
    http::HttpResponse response;
    response.status = code;
    response.headers = std::move(headers);
    sink.on_response_start(response);
    const std::size_t length = std::min(body.size(), cut_after.value_or(body.size()));
    for (std::size_t done = 0; done < length;) {
      const std::size_t piece = std::min<std::size_t>(16 * 1024, length - done);
      if (!sink.on_body(std::as_bytes(std::span(body.data() + done, piece)))) {
        // libcurl closes a connection whose transfer the sink stopped, even at its last byte.
        if (done + piece == body.size()) ++stopped_at_the_last_byte;
        response.failure = http::TransportFailure::kStoppedBySink;
        return response;
      }
      sink.on_read_done();
      done += piece;
    }
    if (length < body.size()) response.failure = http::TransportFailure::kConnectionLost;
    response.body_bytes = length;
    return response;
  }

  static http::HttpResponse status(long code) {
    http::HttpResponse response;
    response.status = code;
    return response;
  }

  const std::string& content_;
  std::string xorbs_[2];
  std::vector<std::size_t> offsets_[2];
  std::set<std::string> signatures_;
  std::vector<RecordedRequest> requests_;
  mutable std::mutex mutex_;
};

class PathProgress final : public ProgressSink {
 public:
  void on_file_path(const RemoteFile& /*file*/, TransferPath path, std::string_view reason) override {
    const std::lock_guard lock(mutex);
    paths.emplace_back(std::string(to_string(path)) + ": " + std::string(reason));
  }
  std::mutex mutex;
  std::vector<std::string> paths;
};

struct XetSourceTest : ::testing::Test {
  TempDir dir;
  RepoId repo{RepoType::kModel, "org/name"};
  std::unique_ptr<store::Layout> layout = store::make_cache_layout(dir.path(), repo, kCommit);
  PathProgress progress;
  Secret token{"hf_unit_test_token"};
  const std::string content = make_content(kChunks * kChunk - 5000);  // the last chunk is short
  FakeCas cas{content};
  RemoteFile file;
  std::vector<PlannedFile> plan;
  int token_requests = 0;
  std::size_t plans_used_ahead = 0;

  void SetUp() override {
    layout->prepare(Snapshot{kCommit, {}}, {}, "main");
    crypto::Digest sha = crypto::Digest::sha256();
    sha.update(std::as_bytes(std::span(content.data(), content.size())));
    file.path = "model.safetensors";
    file.size = content.size();
    file.blob_id = std::string(40, '0');
    file.lfs_sha256 = sha.finish_hex();
    file.lfs_size = content.size();
    file.xet_hash = kXetHash;
    plan.push_back({file, false, false});
  }

  std::shared_ptr<hub::XetTokens> tokens() {
    return std::make_shared<hub::XetTokens>([this] {
      ++token_requests;
      hub::XetAccess access;
      access.cas_url = kCas;
      access.token = Secret("xet_unit_test_token_" + std::to_string(token_requests));
      access.expires = std::chrono::system_clock::now() + std::chrono::hours(1);
      return access;
    });
  }

  FetchResults fetch(std::shared_ptr<hub::XetTokens> xet_tokens, std::size_t connections = 3) {
    BridgeSettings bridge;
    bridge.endpoint = kEndpoint;
    bridge.token = &token;
    bridge.repo = repo;
    bridge.commit = kCommit;
    bridge.max_attempts = 5;
    bridge.retry_base_delay = std::chrono::milliseconds(1);
    XetSettings xet;
    xet.tokens = std::move(xet_tokens);
    xet.max_attempts = 5;
    xet.retry_base_delay = std::chrono::milliseconds(1);
    xet.layout_records = layout->state_dir();
    XetSource source(
        xet, bridge, http::TransportSettings{},
        [this] { return std::make_unique<test_support::LentTransport<FakeCas>>(cas); }, progress);
    FetchSettings settings;
    settings.connections = connections;
    settings.chunks = {12, 100 * kKiB, 25 * kKiB};  // ranges that start and end inside chunks
    settings.file = IncomingFileSettings{false, 3, std::chrono::milliseconds(0)};
    FetchResults results = fetch_files(plan, settings, source, *layout, publish_into(*layout), progress, {});
    results.bytes_over_xet = source.shared().bytes_stored;
    results.xorb_bytes_fetched = source.shared().bytes_fetched;
    plans_used_ahead = source.plan_takes().used;
    return results;
  }

  std::string blob() const {
    std::ifstream in(dir.path() / "models--org--name" / "blobs" / file.etag(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  void expect_tokens_where_they_belong() {
    for (const RecordedRequest& request : cas.requests()) {
      const bool to_hub = request.url.rfind(kEndpoint + "/", 0) == 0;
      const bool to_cas = request.url.rfind(kCas + "/", 0) == 0;
      EXPECT_EQ(request.bearer, to_hub || to_cas) << request.url;
    }
  }
};

TEST_F(XetSourceTest, AXetFileArrivesByteIdenticalOverSeveralConnectionsAndTheTokensStayOnTheirHosts) {
  const FetchResults results = fetch(tokens());

  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(), content);
  EXPECT_EQ(results.bytes_over_xet, content.size());
  EXPECT_EQ(token_requests, 1) << "one token for the whole download";
  expect_tokens_where_they_belong();
  EXPECT_TRUE(cas.scripted.requests_to(hub::resolve_url(kEndpoint, repo, kCommit, file.path)).empty())
      << "nothing went over the bridge";
  std::size_t v2 = 0;
  for (const RecordedRequest& request : cas.requests()) v2 += request.url.find("/v2/") != std::string::npos;
  EXPECT_GE(v2, 1U);
  EXPECT_LE(v2, 3U) << "V2 at most once per connection (those asking before the first 404 came back), then V1 only";
  ASSERT_FALSE(progress.paths.empty());
  EXPECT_EQ(progress.paths.front().rfind("xet: ", 0), 0U) << progress.paths.front();
}

TEST_F(XetSourceTest, ThePublishedFileGetsARecordOfWhereEachChunkLies) {
  const FetchResults results = fetch(tokens());
  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();

  const std::optional<xet::ChunkLayout> layout_record =
      store::load_chunk_layout(layout->state_dir(), *file.lfs_sha256, file.size);
  ASSERT_TRUE(layout_record.has_value());
  // Chunk c of xorb x is chunk 12x + c of the file. Every chunk is recorded where it lies, also those that
  // two ranges (they start and end inside chunks here) each wrote part of.
  std::uint64_t covered = 0;
  for (const xet::ChunkRun& run : layout_record->runs) {
    const std::size_t x = run.xorb_hash == FakeCas::xorb_hash(0) ? 0 : 1;
    ASSERT_EQ(run.xorb_hash, FakeCas::xorb_hash(x));
    EXPECT_EQ(run.file_offset, (x * kChunks / 2 + run.chunk_begin) * kChunk);
    for (std::size_t k = 0; k < run.lengths.size(); ++k) {
      const std::size_t chunk = x * kChunks / 2 + run.chunk_begin + k;
      EXPECT_EQ(run.lengths[k], std::min(kChunk, content.size() - chunk * kChunk)) << "chunk " << chunk;
    }
    covered += run.bytes();
  }
  EXPECT_EQ(covered, content.size());
}

TEST_F(XetSourceTest, ABodyReadToItsEndIsNotStoppedSoItsConnectionIsKept) {
  const FetchResults results = fetch(tokens(), 1);
  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(), content);
  EXPECT_EQ(cas.stopped_at_the_last_byte, 0) << "every xorb GET would have cost a new connection";
}

TEST_F(XetSourceTest, RangesThatEndInsideAChunkFetchItOnce) {
  // The scheduler's ranges are 100 KiB, the chunks 16 KiB: each range's last chunk runs past its end. The
  // range takes the rest of that chunk, and the next range starts after it.
  const FetchResults results = fetch(tokens(), 1);
  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(), content);
  EXPECT_EQ(results.xorb_bytes_fetched, cas.xorb_bytes()) << "every xorb byte once, none twice";
}

TEST_F(XetSourceTest, ARangeThatWouldCrossIntoTheNextXorbEndsThereAndTheNextRangeStartsThere) {
  // On one connection, 100 KiB ranges over two 192 KiB xorbs: the second range (112-212 KiB once the first
  // took the rest of its last chunk) would fetch from both xorbs. It ends at 192 KiB instead, and the next
  // range starts there: four ranges, four xorb GETs (five without the cut), every xorb byte once.
  const FetchResults results = fetch(tokens(), 1);
  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(), content);
  std::size_t xorb_gets = 0;
  for (const RecordedRequest& request : cas.requests()) xorb_gets += request.url.rfind("https://xorbs.test/", 0) == 0;
  EXPECT_EQ(xorb_gets, 4U);
  EXPECT_EQ(results.xorb_bytes_fetched, cas.xorb_bytes()) << "every xorb byte once, none twice";
}

TEST_F(XetSourceTest, TheNextRangesReconstructionIsAskedWhileTheCurrentOneDownloads) {
  // Four 100 KiB ranges on one connection: each range after the first finds its plan asked ahead (each xorb
  // body takes 100 ms here, the prefetch's answer microseconds), and nothing is fetched twice for it.
  cas.xorb_delay = std::chrono::milliseconds(100);
  const FetchResults results = fetch(tokens(), 1);
  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(), content);
  EXPECT_EQ(results.xorb_bytes_fetched, cas.xorb_bytes()) << "every xorb byte once, none twice";
  EXPECT_GE(plans_used_ahead, 2U);
  expect_tokens_where_they_belong();
}

TEST_F(XetSourceTest, AMalformedChunkIsFetchedAgainAndNeverWritten) {
  cas.faults["bad_header"] = 2;
  const FetchResults results = fetch(tokens(), 1);
  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(), content);
  EXPECT_EQ(cas.faults["bad_header"], 0) << "the fault was served";
}

TEST_F(XetSourceTest, AnExpiredPresignedUrlGetsANewReconstruction) {
  cas.faults["expired_url"] = 1;
  const FetchResults results = fetch(tokens(), 1);
  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(), content);
  expect_tokens_where_they_belong();
  EXPECT_EQ(cas.faults["expired_url"], 0) << "the fault was served";
}

TEST_F(XetSourceTest, ARejectedTokenIsRenewed) {
  cas.faults["token_401"] = 1;
  const FetchResults results = fetch(tokens(), 1);
  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(), content);
  EXPECT_EQ(token_requests, 2) << "the 401 made the next attempt ask the Hub for a new token";
  EXPECT_EQ(cas.faults["token_401"], 0) << "the fault was served";
}

TEST_F(XetSourceTest, ABodyCutShortContinuesFromWhereTheFileStands) {
  cas.faults["cut_body"] = 1;
  const FetchResults results = fetch(tokens(), 1);
  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(), content);
  EXPECT_EQ(results.bytes_over_xet, content.size());
  EXPECT_LT(results.xorb_bytes_fetched, content.size() + 2 * kChunk) << "at most the chunk in flight is fetched again";
  EXPECT_EQ(cas.faults["cut_body"], 0) << "the fault was served";
}

TEST_F(XetSourceTest, ACasThatIsDownSendsTheFileOverTheBridge) {
  cas.faults["cas_down"] = 1000;
  cas.scripted.script(hub::resolve_url(kEndpoint, repo, kCommit, file.path), {FakeAnswer::redirect(kCdn)});
  cas.scripted.script(kCdn, {FakeAnswer::ranged(content)});

  const FetchResults results = fetch(tokens(), 2);

  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(), content);
  EXPECT_EQ(results.bytes_over_xet, 0U);
  const auto fell_back = std::find_if(progress.paths.begin(), progress.paths.end(),
                                      [](const std::string& path) { return path.rfind("bridge: fell back", 0) == 0; });
  EXPECT_NE(fell_back, progress.paths.end());
  expect_tokens_where_they_belong();
}

TEST_F(XetSourceTest, ACasThatIgnoresTheRangeSendsTheFileOverTheBridgeInsteadOfMisplacingBytes) {
  cas.faults["ignore_range"] = 1;
  cas.scripted.script(hub::resolve_url(kEndpoint, repo, kCommit, file.path), {FakeAnswer::redirect(kCdn)});
  cas.scripted.script(kCdn, {FakeAnswer::ranged(content)});

  const FetchResults results = fetch(tokens(), 1);

  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(), content);
  const auto fell_back = std::find_if(progress.paths.begin(), progress.paths.end(), [](const std::string& path) {
    return path.find("does not fit the file") != std::string::npos;
  });
  EXPECT_NE(fell_back, progress.paths.end());
}

TEST_F(XetSourceTest, WithoutATokenEveryFileGoesOverTheBridge) {
  cas.scripted.script(hub::resolve_url(kEndpoint, repo, kCommit, file.path), {FakeAnswer::redirect(kCdn)});
  cas.scripted.script(kCdn, {FakeAnswer::ranged(content)});

  const FetchResults results = fetch(nullptr, 2);

  ASSERT_FALSE(results.errors[0].has_value()) << results.errors[0]->what();
  EXPECT_EQ(blob(), content);
  EXPECT_EQ(cas.reconstructions, 0);
  ASSERT_FALSE(progress.paths.empty());
  EXPECT_EQ(progress.paths.front().rfind("bridge: ", 0), 0U) << progress.paths.front();
}

// A 100-byte LFS file stored in Xet.
RemoteFile small_xet_file() {
  RemoteFile remote;
  remote.path = "model.safetensors";
  remote.size = 100;
  remote.lfs_sha256 = std::string(64, 'e');
  remote.xet_hash = kXetHash;
  return remote;
}

TEST(SourcedFile, RecordsTheChunkLayoutOnceThePublishedFileIsThereAndForgetsItWhenTheFileStartsOver) {
  TempDir dir;
  const RemoteFile remote = small_xet_file();
  SourcedFile state(remote, true, dir.path());
  ASSERT_NE(state.chunk_layout(), nullptr);
  state.chunk_layout()->add(0, FakeCas::xorb_hash(0), 0, 60);  // a pass whose hash did not match
  state.on_start_over();
  state.chunk_layout()->add(0, FakeCas::xorb_hash(1), 7, 100);
  EXPECT_FALSE(store::load_chunk_layout(dir.path(), *remote.lfs_sha256, remote.size)) << "not before publish";
  state.on_published();

  const std::optional<xet::ChunkLayout> record = store::load_chunk_layout(dir.path(), *remote.lfs_sha256, 100);
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->runs, (std::vector<xet::ChunkRun>{{FakeCas::xorb_hash(1), 0, 7, {100}}}));
  EXPECT_FALSE(store::load_chunk_layout(dir.path(), *remote.lfs_sha256, 99)) << "a record of another size";
}

TEST(SourcedFile, KeepsNoRecordForAFileOverTheBridgeOrWithoutASha256) {
  TempDir dir;
  RemoteFile remote = small_xet_file();
  EXPECT_EQ(SourcedFile(remote, false, dir.path()).chunk_layout(), nullptr);
  EXPECT_EQ(SourcedFile(remote, true).chunk_layout(), nullptr) << "no records folder given";
  remote.lfs_sha256.reset();
  EXPECT_EQ(SourcedFile(remote, true, dir.path()).chunk_layout(), nullptr);
}

TEST(ChunkLayoutRecords, IgnoresADamagedRecordAndRefusesANameThatIsNotASha256) {
  TempDir dir;
  const std::string sha256(64, 'e');
  store::save_chunk_layout(dir.path(), sha256, {.file_size = 10, .runs = {{std::string(64, 'b'), 0, 0, {10}}}});
  ASSERT_TRUE(store::load_chunk_layout(dir.path(), sha256, 10));
  std::ofstream(store::chunk_layout_path(dir.path(), sha256), std::ios::binary | std::ios::app) << "x";
  EXPECT_FALSE(store::load_chunk_layout(dir.path(), sha256, 10));
  EXPECT_FALSE(store::load_chunk_layout(dir.path(), "../../etc/passwd", 10));
  EXPECT_THROW(store::chunk_layout_path(dir.path(), "../x"), std::invalid_argument);
}

TEST(ChunkLayoutRecords, AreReadOnlyFromRegularFilesAndOnlyAsFarAsTheirBound) {
  TempDir dir;
  const std::string sha256(64, 'e');
  store::save_chunk_layout(dir.path(), sha256, {.file_size = 10, .runs = {{std::string(64, 'b'), 0, 0, {10}}}});
  const std::filesystem::path folder = store::chunk_layout_path(dir.path(), sha256).parent_path();
  // A link under a record's name (to a record, or to /proc's files, which say they are empty and are not).
  std::filesystem::create_symlink(store::chunk_layout_path(dir.path(), sha256), folder / std::string(64, 'f'));
  std::filesystem::create_symlink("/proc/self/status", folder / std::string(64, 'a'));
  const std::vector<store::ChunkLayoutRecord> records = store::load_chunk_layouts(dir.path());
  ASSERT_EQ(records.size(), 1U);
  EXPECT_EQ(records[0].sha256, sha256);
  EXPECT_EQ(util::read_text_file("/proc/self/status", 16), std::nullopt) << "a size of 0 is not a bound";
  EXPECT_TRUE(util::read_text_file("/proc/self/status", 1 << 20).has_value());
}

}  // namespace
}  // namespace hfget::transfer
