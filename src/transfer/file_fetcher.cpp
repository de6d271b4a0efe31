// SPDX-License-Identifier: MIT
// One file, from the partial bytes on disk to its final name. Every body request carries
// `Range: bytes=<have>-`, so a retry, a resume after kill -9 and a file above the Hub's 50 GB limit for
// unranged GETs all take the same path. The Hub answers LFS files with a redirect to a signed CDN URL; we
// keep that URL for the file's later ranges (saving the Hub's rate-limit quota), never send the token
// there, and resolve again when the CDN refuses it (expired signature).
#include "transfer/file_fetcher.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "hfget/error.hpp"
#include "http/content_range.hpp"
#include "http/retrier.hpp"
#include "http/url.hpp"
#include "hub/hub_errors.hpp"
#include "hub/hub_urls.hpp"
#include "store/file_lock.hpp"

namespace hfget::transfer {
namespace {

constexpr int kMaxRedirects = 10;

// Writes a 2xx body into the partial file and the hash, after checking that a 206 continues the file
// exactly. A 200 to a ranged request means the server ignored the Range: start the file over.
class PartialFileSink final : public http::BodySink {
 public:
  PartialFileSink(const RemoteFile& file, store::PartialFile& partial, std::optional<crypto::ContentHasher>& hasher,
                  ProgressSink& progress)
      : file_(file), partial_(partial), hasher_(hasher), progress_(progress) {}

  void on_response_start(const http::HttpResponse& head) override {
    const std::uint64_t offset = partial_.size();
    if (head.status == 206) {
      const std::string* value = head.header("content-range");
      const std::optional<http::ContentRange> range = value ? http::parse_content_range(*value) : std::nullopt;
      if (!range || !http::continues_partial_file(*range, offset, file_.size)) {
        rejection_ = fmt::format("Content-Range '{}' does not continue the file at byte {} of {}",
                                 value ? *value : "", offset, file_.size);
      }
      return;
    }
    if (offset > 0) {
      spdlog::info("{}: the server ignored the Range request (HTTP {}); starting the file over", file_.path,
                   head.status);
      restart_from_zero();
    }
  }

  bool on_body(std::span<const std::byte> bytes) override {
    if (rejection_) return false;
    const std::uint64_t room = file_.size - partial_.size();
    const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(room, bytes.size()));
    const std::span<const std::byte> wanted = bytes.first(take);
    partial_.append(wanted);
    hasher_->update(wanted);
    received_ += take;
    progress_.on_bytes(file_, take);
    if (take < bytes.size()) {
      spdlog::warn("{}: the server sent more than the {} bytes the listing gives; ignoring the rest", file_.path,
                   file_.size);
      return false;
    }
    return true;
  }

  void restart_from_zero() {
    progress_.on_bytes_discarded(file_, partial_.size());
    partial_.restart();
    hasher_.emplace(file_);
  }

  const std::optional<std::string>& rejection() const noexcept { return rejection_; }
  std::uint64_t received() const noexcept { return received_; }

 private:
  const RemoteFile& file_;
  store::PartialFile& partial_;
  std::optional<crypto::ContentHasher>& hasher_;
  ProgressSink& progress_;
  std::optional<std::string> rejection_;
  std::uint64_t received_ = 0;
};

std::string describe(const http::HttpResponse& response) {
  switch (response.failure) {
    case http::TransportFailure::kNone: return fmt::format("HTTP {}", response.status);
    case http::TransportFailure::kTimeout: return "timed out or stalled: " + response.failure_message;
    case http::TransportFailure::kConnect: return "cannot connect: " + response.failure_message;
    case http::TransportFailure::kConnectionLost: return "connection lost: " + response.failure_message;
    case http::TransportFailure::kTls: return "TLS error: " + response.failure_message;
    case http::TransportFailure::kStoppedBySink: return "transfer stopped";
    case http::TransportFailure::kCancelled: return "interrupted";
    case http::TransportFailure::kOther: return response.failure_message;
  }
  return response.failure_message;
}

}  // namespace

FileFetcher::FileFetcher(const FetchSettings& settings, store::Layout& layout, ProgressSink& progress,
                         http::TransportSettings transport, std::stop_token stop)
    : settings_(settings), layout_(layout), progress_(progress), request_(std::move(transport)), stop_(std::move(stop)) {}

FetchOutcome FileFetcher::fetch(const RemoteFile& file) {
  const store::FileLock lock = layout_.lock(file, stop_);
  // Another process (or another path with the same content) may have finished it while we waited.
  if (layout_.is_complete(file)) {
    layout_.link_existing(file);
    return FetchOutcome::kAlreadyComplete;
  }
  if (layout_.adopt_unrecorded(file)) {
    spdlog::info("{}: already on disk with the listed hash; recorded it without downloading", file.path);
    return FetchOutcome::kAlreadyComplete;
  }
  store::PartialFile partial = layout_.open_partial(file);
  if (partial.size() > file.size) partial.restart();

  // A mismatch discards the bytes and downloads the file once more; a second mismatch is not bad luck.
  for (int pass = 1;; ++pass) {
    std::optional<crypto::ContentHasher> hasher(std::in_place, file);
    progress_.on_file_started(file, partial.size());
    // A resumed file is still hashed in full: the bytes from the earlier run are read back once.
    partial.read_existing([&](std::span<const std::byte> bytes) { hasher->update(bytes); });
    download_remaining(file, partial, hasher);

    const std::string actual = hasher->finish_hex();
    if (actual == hasher->expected()) {
      layout_.publish(file, std::move(partial));
      progress_.on_file_done(file);
      return FetchOutcome::kDownloaded;
    }
    const std::string mismatch = fmt::format("{}: {} mismatch: expected {}, got {}", file.path, hasher->algorithm(),
                                             hasher->expected(), actual);
    progress_.on_bytes_discarded(file, partial.size());
    partial.restart();
    if (pass >= 2) throw Error(ErrorCode::kVerificationFailed, mismatch + " (downloaded twice)", file.path);
    spdlog::warn("{}; downloading it again", mismatch);
  }
}

void FileFetcher::download_remaining(const RemoteFile& file, store::PartialFile& partial,
                                     std::optional<crypto::ContentHasher>& hasher) {
  http::Retrier retrier(settings_.max_attempts, settings_.retry_base_delay, stop_);
  const std::string resolve_url = hub::resolve_url(settings_.endpoint, settings_.repo, settings_.commit, file.path);
  std::string cdn_url;  // the signed URL the Hub redirected to, reused until the CDN refuses it

  // An empty file still takes one request: its bytes are nothing, but access to them must be granted (a
  // gated repo must not yield even its empty files). It is the only request sent without a Range, since
  // "bytes=0-" of nothing is unsatisfiable.
  if (file.size > 0 && partial.size() == file.size) return;  // all kept from an earlier run; the hash decides
  while (true) {
    if (stop_.stop_requested()) throw Error(ErrorCode::kInterrupted, "interrupted", file.path);
    std::string url = cdn_url.empty() ? resolve_url : cdn_url;
    PartialFileSink sink(file, partial, hasher, progress_);
    http::HttpResponse response;
    for (int hop = 0;; ++hop) {
      if (hop > kMaxRedirects) throw Error(ErrorCode::kNetwork, file.path + ": too many redirects", file.path);
      http::RequestSpec spec;
      spec.url = url;
      if (file.size > 0) spec.range_from = partial.size();
      // The token goes to the Hub's host only, never to a CDN or any other host a redirect names.
      if (http::same_host(url, settings_.endpoint)) spec.bearer_token = settings_.token;
      response = request_.get(spec, sink, stop_);
      spdlog::debug("{}: GET {} (from byte {}) -> {}", file.path, http::same_host(url, settings_.endpoint) ? url : "CDN",
                    partial.size(), describe(response));
      const bool is_redirect = response.failure == http::TransportFailure::kNone && response.status >= 300 &&
                               response.status < 400 && !response.redirect_url.empty();
      if (!is_redirect) break;
      const std::optional<http::UrlParts> target = http::parse_url(response.redirect_url);
      if (!target || (target->scheme != "http" && target->scheme != "https")) {
        throw Error(ErrorCode::kNetwork, file.path + ": redirected to an unsupported URL scheme", file.path);
      }
      url = response.redirect_url;
      if (!http::same_host(url, settings_.endpoint)) cdn_url = url;
    }
    bytes_received_ += sink.received();
    if (sink.received() > 0) retrier.note_progress();
    if (response.failure == http::TransportFailure::kCancelled || stop_.stop_requested()) {
      throw Error(ErrorCode::kInterrupted, "interrupted", file.path);
    }
    const bool answered = response.failure == http::TransportFailure::kNone ||
                          response.failure == http::TransportFailure::kStoppedBySink;
    // Done once a 2xx brought the file to its listed size (a server that sends too much is cut there).
    if (answered && response.status >= 200 && response.status < 300 && partial.size() == file.size) break;

    http::Attempt attempt{response.failure, response.status};
    std::string reason = describe(response);
    if (sink.rejection()) {
      reason = *sink.rejection();
      sink.restart_from_zero();
      attempt = {http::TransportFailure::kOther, 0};
    } else if (answered && response.status >= 200 && response.status < 300) {
      reason = fmt::format("the body ended at byte {} of {}", partial.size(), file.size);
      attempt = {http::TransportFailure::kConnectionLost, 0};
    } else if (answered && response.status == 416) {
      reason = "the server cannot serve the range (HTTP 416)";
      sink.restart_from_zero();
      attempt = {http::TransportFailure::kOther, 0};
    } else if (answered && !cdn_url.empty() && url == cdn_url &&
               (response.status == 401 || response.status == 403 || response.status == 404 ||
                response.status == 410)) {
      // An expired or revoked signed URL: ask the Hub for a fresh one.
      reason = fmt::format("the CDN refused the signed URL (HTTP {}); resolving it again", response.status);
      cdn_url.clear();
      attempt = {http::TransportFailure::kOther, 0};
    } else if (answered && http::next_step(attempt) == http::NextStep::kGiveUp) {
      throw hub::error_from_response(response, hub::RequestContext{&settings_.repo, settings_.commit, file.path});
    }

    const std::string* retry_after = response.header("retry-after");
    if (!retrier.wait_before_retry(attempt, retry_after ? http::parse_retry_after(*retry_after) : std::nullopt)) {
      if (stop_.stop_requested()) throw Error(ErrorCode::kInterrupted, "interrupted", file.path);
      throw Error(ErrorCode::kNetwork,
                  fmt::format("{}: download failed after {} attempts: {} ({} of {} bytes kept for resume)", file.path,
                              retrier.attempts_failed(), reason, partial.size(), file.size),
                  file.path);
    }
    progress_.on_retry(file, retrier.attempts_failed(), reason, retrier.last_delay());
  }
}

}  // namespace hfget::transfer
