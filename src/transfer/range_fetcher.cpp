// SPDX-License-Identifier: MIT
// Every body request carries a Range: a retry, a resume after kill -9, a chunk of a large file and a file
// above the Hub's 50 GB limit for unranged GETs all take the same path. The Hub answers LFS files with a
// redirect to a signed CDN URL; the file's connections share it (saving the Hub's rate-limit quota), never
// send the token there, and resolve again when the CDN refuses it (an expired signature). A 206 must
// continue exactly where this connection stands, for the size the listing promised; anything else is
// refused rather than spliced.
#include "transfer/range_fetcher.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "hfget/error.hpp"
#include "http/content_range.hpp"
#include "http/range_answer.hpp"
#include "http/retrier.hpp"
#include "http/url.hpp"
#include "hub/hub_errors.hpp"
#include "hub/hub_urls.hpp"
#include "util/printable.hpp"

namespace hfget::transfer {
namespace {

constexpr int kMaxRedirects = 10;
// Bytes written (and journaled, and hashed) at a time per connection: fixed memory, 128 KiB × --connections,
// and what a kill -9 between a write and its journal line can cost a connection (about one socket read).
constexpr std::size_t kBatchBytes = 128 << 10;

// Writes a 2xx body into the file at the task's position, up to the task's (possibly lowered) end, and
// records what it wrote in the journal (which also lets the hash follow the written prefix). libcurl hands
// the body over in 16 KiB pieces; they are gathered in the connection's batch buffer and written, journaled
// and hashed a socket read at a time (at most 128 KiB): on a fast link an 8th of the system calls and lock
// round trips, and a kill -9 still loses only what was in flight.
class RangeSink final : public http::BodySink {
 public:
  RangeSink(RangeTask& task, std::vector<std::byte>& batch) : task_(task), file_(task.job->file()), batch_(batch) {
    batch_.clear();
  }

  // The origin the next request goes to: ETags are compared per server.
  void set_origin(std::string origin) { origin_ = std::move(origin); }

  void on_response_start(const http::HttpResponse& head) override {
    const std::uint64_t position = task_.position;
    if (!task_.job->accept_validator(origin_, head.header("etag"))) {
      // Also what a server answers to If-Range when the file changed: the whole new file, with a 200.
      rejection_ = fmt::format("the file changed on the server (another ETag, HTTP {}); starting it over", head.status);
      changed_ = true;
    } else if (head.status == 206) {
      const std::string* value = head.header("content-range");
      const std::optional<http::ContentRange> range = value ? http::parse_content_range(*value) : std::nullopt;
      if (!range || !http::continues_partial_file(*range, position, file_.size)) {
        rejection_ = fmt::format("Content-Range '{}' does not continue the file at byte {} of {}",
                                 util::printable(value ? *value : ""), position, file_.size);
      }
    } else if (position > 0) {
      rejection_ = fmt::format("the server ignored the Range request (HTTP {}) at byte {}", head.status, position);
    }
  }

  bool on_body(std::span<const std::byte> bytes) override {
    if (rejection_ || task_.cancelled) return false;
    const std::uint64_t next = task_.position + batch_.size();
    const std::uint64_t end = task_.end;
    const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(end > next ? end - next : 0, bytes.size()));
    for (std::span<const std::byte> rest = bytes.first(take); !rest.empty();) {
      const std::size_t piece = std::min(batch_.capacity() - batch_.size(), rest.size());
      batch_.insert(batch_.end(), rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(piece));
      rest = rest.subspan(piece);
      if (batch_.size() == batch_.capacity()) flush();
    }
    received_ += take;
    // Past the end: the rest belongs to another connection (or the server sent more than the listing says).
    return take == bytes.size();
  }

  // What one read from the socket delivered is written together: on a fast link that is hundreds of KiB,
  // on a slow one a piece or two, so a kill -9 loses no more than before batching.
  void on_read_done() override { flush(); }

  /// Writes what the batch holds at the task's position and records it. Called when the batch is full,
  /// after each read from the socket and after every request, however it ended.
  void flush() {
    if (batch_.empty()) return;
    struct Emptied {  // written or not (a full disk throws), the batch is done with
      std::vector<std::byte>& batch;
      ~Emptied() { batch.clear(); }
    } emptied{batch_};
    const std::uint64_t position = task_.position;
    const std::uint64_t end = task_.end;  // may have been lowered by a split meanwhile
    const auto length =
        static_cast<std::size_t>(std::min<std::uint64_t>(end > position ? end - position : 0, batch_.size()));
    if (length == 0) return;
    const std::span<const std::byte> bytes(batch_.data(), length);
    try {
      record(position, bytes);
    } catch (const Error& error) {
      if (error.code() != ErrorCode::kDiskFull) throw;
      // Part of the batch may have fit: keep exactly that much for the resume, in pieces.
      constexpr std::size_t kPiece = 16 << 10;
      for (std::size_t done = 0; done < length; done += kPiece) {
        record(position + done, bytes.subspan(done, std::min(kPiece, length - done)));  // throws where it stops
      }
    }
  }

  const std::optional<std::string>& rejection() const noexcept { return rejection_; }

  bool file_changed() const noexcept { return changed_; }
  std::uint64_t received() const noexcept { return received_; }

 private:
  void record(std::uint64_t position, std::span<const std::byte> bytes) {
    task_.job->store(position, bytes);
    task_.position = position + bytes.size();
  }

  RangeTask& task_;
  const RemoteFile& file_;
  std::vector<std::byte>& batch_;
  std::string origin_;
  std::optional<std::string> rejection_;
  bool changed_ = false;
  std::uint64_t received_ = 0;
};

// Ends a connection's resolve of its file's CDN URL when the attempt is over, however it ends.
class ResolveGuard {
 public:
  explicit ResolveGuard(FileJob* job) : job_(job) {}
  ResolveGuard(const ResolveGuard&) = delete;
  ResolveGuard& operator=(const ResolveGuard&) = delete;
  ~ResolveGuard() { finish(); }
  void finish() {
    if (job_ != nullptr) job_->resolve_finished();
    job_ = nullptr;
  }

 private:
  FileJob* job_;
};

std::string describe(const http::HttpResponse& response) {
  return http::describe(response.failure, response.failure_message, response.status);
}

// What one connection sends with.
struct Connection {
  http::Transport& transport;
  const FetchSettings& settings;
  const std::stop_token& stop;
};

// Sends the task's range to `url`, following redirects (rewriting `url` to the last one): the token only to
// the endpoint's origin, an If-Range per origin, and a redirect to another host shared with the file's
// other connections as its signed CDN URL. Returns the first answer that is not a redirect.
http::HttpResponse get_following_redirects(const Connection& connection, RangeTask& task, RangeSink& sink,
                                           ResolveGuard& resolving, std::string& url) {
  FileJob& job = *task.job;
  const RemoteFile& file = job.file();
  const FetchSettings& settings = connection.settings;
  for (int hop = 0;; ++hop) {
    if (hop > kMaxRedirects) throw Error(ErrorCode::kNetwork, file.path + ": too many redirects", file.path);
    http::RequestSpec spec;
    spec.url = url;
    const std::string origin = http::origin_of(url);
    // An empty file still takes one request, without a Range ("bytes=0-" of nothing is unsatisfiable).
    if (file.size != 0) {
      spec.range_from = task.position.load();
      spec.range_last = task.end.load() - 1;
      // A server whose file changed answers with the whole new file instead of splicing old and new.
      if (const std::optional<std::string> etag = job.if_range_for(origin)) spec.extra_headers = {"If-Range: " + *etag};
    }
    sink.set_origin(origin);
    const bool to_the_hub = http::same_origin(url, settings.endpoint);
    if (to_the_hub) spec.bearer_token = settings.token;
    if (to_the_hub && settings.hub_quota != nullptr && !settings.hub_quota->wait_until_available(connection.stop)) {
      throw Error(ErrorCode::kInterrupted, "interrupted", file.path);
    }
    http::HttpResponse response;
    try {
      response = connection.transport.get(spec, sink, connection.stop);
    } catch (...) {
      sink.flush();  // what arrived before the error is kept for the resume
      throw;
    }
    sink.flush();
    spdlog::debug("{}: GET {} (bytes {}-{}) -> {}", file.path, to_the_hub ? url : "CDN", spec.range_from.value_or(0),
                  spec.range_last.value_or(0), describe(response));
    const bool is_redirect = response.failure == http::TransportFailure::kNone && response.status >= 300 &&
                             response.status < 400 && !response.redirect_url.empty();
    if (!is_redirect) return response;
    const std::optional<http::UrlParts> target = http::parse_url(response.redirect_url);
    if (!target || (target->scheme != "http" && target->scheme != "https")) {
      throw Error(ErrorCode::kNetwork, file.path + ": redirected to an unsupported URL scheme", file.path);
    }
    url = response.redirect_url;
    // Only a redirect to another host is a signed CDN URL worth sharing; the token never follows it.
    if (!http::same_origin(url, settings.endpoint)) {
      job.set_cdn_url(url);
      resolving.finish();
    }
  }
}

// The error once the retries (or --retry-max-time) are used up, naming the last failure.
Error retries_used_up(const RemoteFile& file, const http::Retrier& retrier, const std::string& reason) {
  const std::string limit =
      retrier.out_of_time() ? fmt::format(" and {}s without progress (--retry-max-time)", retrier.max_time().count())
                            : "";
  return Error(ErrorCode::kNetwork,
               fmt::format("{}: download failed after {} attempts{}: {} (what arrived is kept for resume)", file.path,
                           retrier.attempts_failed(), limit, reason),
               file.path);
}

}  // namespace

RangeFetcher::RangeFetcher(const FetchSettings& settings, ProgressSink& progress, http::TransportSettings transport,
                           std::stop_token stop)
    : settings_(settings),
      progress_(progress),
      owned_transport_(std::make_unique<http::EasyRequest>(transport)),
      transport_(*owned_transport_),
      progress_bytes_(http::progress_threshold(transport.speed_limit, transport.stall_timeout)),
      stop_(std::move(stop)) {
  batch_.reserve(kBatchBytes);
}

RangeFetcher::RangeFetcher(const FetchSettings& settings, ProgressSink& progress, http::Transport& transport,
                           const http::TransportSettings& limits, std::stop_token stop)
    : settings_(settings),
      progress_(progress),
      transport_(transport),
      progress_bytes_(http::progress_threshold(limits.speed_limit, limits.stall_timeout)),
      stop_(std::move(stop)) {
  batch_.reserve(kBatchBytes);
}

void RangeFetcher::fetch(RangeTask& task) {
  FileJob& job = *task.job;
  const RemoteFile& file = job.file();
  http::Retrier retrier(settings_.max_attempts, settings_.retry_base_delay, stop_, settings_.retry_max_time);
  const std::string resolve_url = hub::resolve_url(settings_.endpoint, settings_.repo, settings_.commit, file.path);
  // An empty file still takes one request, without a Range ("bytes=0-" of nothing is unsatisfiable): its
  // bytes are nothing, but access to them must be granted (a gated repo yields not even its empty files).
  const bool empty_file = file.size == 0;

  while (true) {
    if (stop_.stop_requested()) throw Error(ErrorCode::kInterrupted, "interrupted", file.path);
    if (task.cancelled || (!empty_file && task.position >= task.end)) return;
    const FileJob::UrlLease lease = job.lease_cdn_url(stop_);
    const std::string& cdn_url = lease.cdn_url;
    // Whatever this attempt ends with, the connections waiting for its redirect stop waiting.
    ResolveGuard resolving(lease.resolving ? &job : nullptr);
    std::string url = cdn_url.empty() ? resolve_url : cdn_url;
    RangeSink sink(task, batch_);
    const http::HttpResponse response =
        get_following_redirects(Connection{transport_, settings_, stop_}, task, sink, resolving, url);
    resolving.finish();  // no redirect to a CDN came: the others stop waiting for one
    // A byte before each stall is no progress: such a server must use up the retries, not renew them.
    if (sink.received() >= progress_bytes_) retrier.note_progress();
    if (response.failure == http::TransportFailure::kCancelled || stop_.stop_requested()) {
      throw Error(ErrorCode::kInterrupted, "interrupted", file.path);
    }
    // The scheduler stops the file's other ranges and starts it over; nothing of this answer was written.
    if (job.restart_requested()) return;
    const http::RangeClassification verdict = http::classify_range_answer(http::RangeAnswer{
        response.failure, response.failure_message, response.status, http::same_origin(url, settings_.endpoint),
        sink.file_changed(), sink.rejection(), task.position.load(), task.end.load(), file.size});
    if (verdict.verdict == http::RangeVerdict::kFileChanged || verdict.verdict == http::RangeVerdict::kComplete) {
      return;
    }
    if (task.cancelled) return;
    if (verdict.verdict == http::RangeVerdict::kGiveUp) {
      throw hub::error_from_response(response, hub::RequestContext{&settings_.repo, settings_.commit, file.path});
    }
    // An expired or revoked signed URL: the next attempt asks the Hub for a new one.
    if (verdict.verdict == http::RangeVerdict::kResolveAgain) job.forget_cdn_url(url);
    if (verdict.refusal) job.note_refusal();
    std::string reason = verdict.reason;
    const bool answered =
        response.failure == http::TransportFailure::kNone || response.failure == http::TransportFailure::kStoppedBySink;
    const std::optional<http::RequestedWait> requested = answered ? http::requested_wait(response) : std::nullopt;
    if (requested) reason += " (" + requested->why + ")";
    // The Hub's quota is the whole download's: the other connections hold their Hub requests until it resets.
    if (requested && requested->quota_used_up && settings_.hub_quota != nullptr &&
        http::same_origin(url, settings_.endpoint)) {
      settings_.hub_quota->used_up_for(requested->wait);
    }
    const auto announce = [&](std::chrono::milliseconds delay) {
      progress_.on_retry(file, retrier.attempts_failed(), reason, delay);
    };
    if (!retrier.wait_before_retry(verdict.attempt, requested ? std::optional(requested->wait) : std::nullopt,
                                   announce)) {
      if (stop_.stop_requested()) throw Error(ErrorCode::kInterrupted, "interrupted", file.path);
      throw retries_used_up(file, retrier, reason);
    }
  }
}

}  // namespace hfget::transfer
