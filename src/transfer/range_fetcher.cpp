// SPDX-License-Identifier: MIT
// Every body request carries a Range: a retry, a resume after kill -9, a chunk of a large file and a file
// above the Hub's 50 GB limit for unranged GETs all take the same path. The Hub answers LFS files with a
// redirect to a signed CDN URL; the file's connections share it (saving the Hub's rate-limit quota), never
// send the token there (http::RedirectFollower owns that rule), and resolve again when the CDN refuses it
// (an expired signature). What an answer means is http::classify_range_answer's to say; this file acts on it.
#include "transfer/range_fetcher.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "hfget/error.hpp"
#include "http/url.hpp"
#include "hub/hub_errors.hpp"
#include "hub/hub_urls.hpp"
#include "transfer/range_sink.hpp"

namespace hfget::transfer {
namespace {

// Bytes written (and journaled, and hashed) at a time per connection: fixed memory, 128 KiB × --connections,
// and what a kill -9 between a write and its journal line can cost a connection (about one socket read).
constexpr std::size_t kBatchBytes = 128 << 10;

Error interrupted(const RemoteFile& file) {
  return Error(ErrorCode::kInterrupted, "interrupted", file.path);
}

// What the bridge adds to each hop of a range's redirect chain: the range (its end may have been lowered
// meanwhile), an If-Range per origin, the Hub's quota; and a redirect to another host is the file's signed
// CDN URL, shared with its other connections.
class BridgeHops final : public http::HopObserver {
 public:
  BridgeHops(RangeTask& task, BridgeFile& source, RangeSink& sink, ResolveGuard& resolving,
             const BridgeSettings& settings, const std::stop_token& stop)
      : task_(task), source_(source), sink_(sink), resolving_(resolving), settings_(settings), stop_(stop) {}

  void before_request(http::RequestSpec& spec, bool to_the_hub) override {
    const std::string origin = http::origin_of(spec.url);
    // An empty file still takes one request, without a Range ("bytes=0-" of nothing is unsatisfiable).
    if (task_.file->remote().size != 0) {
      spec.range_from = task_.position.load();
      spec.range_last = task_.end.load() - 1;
      // A server whose file changed answers with the whole new file instead of splicing old and new.
      if (const std::optional<std::string> etag = task_.file->validator_for(origin)) {
        spec.extra_headers = {"If-Range: " + *etag};
      }
    }
    sink_.set_origin(origin);
    if (to_the_hub && settings_.hub_quota != nullptr && !settings_.hub_quota->wait_until_available(stop_)) {
      throw interrupted(task_.file->remote());
    }
  }

  void after_answer(const http::RequestSpec& spec, bool to_the_hub, const http::HttpResponse& response) override {
    sink_.flush();
    spdlog::debug("{}: GET {} (bytes {}-{}) -> {}", task_.file->remote().path, to_the_hub ? spec.url : "CDN",
                  spec.range_from.value_or(0), spec.range_last.value_or(0),
                  http::describe(response.failure, response.failure_message, response.status));
  }

  void on_redirect(const std::string& target, bool to_the_hub) override {
    // Only a redirect to another host is a signed CDN URL worth sharing; the token never follows it.
    if (to_the_hub) return;
    source_.signed_url.set(target);
    resolving_.finish();
  }

 private:
  RangeTask& task_;
  BridgeFile& source_;
  RangeSink& sink_;
  ResolveGuard& resolving_;
  const BridgeSettings& settings_;
  const std::stop_token& stop_;
};

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

RangeFetcher::RangeFetcher(const BridgeSettings& settings, ProgressSink& progress,
                           const http::TransportSettings& transport, std::stop_token stop)
    : RangeFetcher(settings, progress, std::make_unique<http::EasyRequest>(transport), transport, std::move(stop)) {}

RangeFetcher::RangeFetcher(const BridgeSettings& settings, ProgressSink& progress,
                           std::unique_ptr<http::Transport> transport, const http::TransportSettings& limits,
                           std::stop_token stop)
    : settings_(settings),
      progress_(progress),
      owned_transport_(std::move(transport)),
      transport_(*owned_transport_),
      follower_(transport_, settings.endpoint, settings.token),
      progress_bytes_(http::progress_threshold(limits.speed_limit, limits.stall_timeout)),
      stop_(std::move(stop)) {
  batch_.reserve(kBatchBytes);
}

RangeFetcher::RangeFetcher(const BridgeSettings& settings, ProgressSink& progress, http::Transport& transport,
                           const http::TransportSettings& limits, std::stop_token stop)
    : settings_(settings),
      progress_(progress),
      transport_(transport),
      follower_(transport_, settings.endpoint, settings.token),
      progress_bytes_(http::progress_threshold(limits.speed_limit, limits.stall_timeout)),
      stop_(std::move(stop)) {
  batch_.reserve(kBatchBytes);
}

void RangeFetcher::fetch(RangeTask& task) {
  auto& source = static_cast<BridgeFile&>(*task.source);  // the bridge source made it
  const RemoteFile& file = task.file->remote();
  http::Retrier retrier(settings_.max_attempts, settings_.retry_base_delay, stop_, settings_.retry_max_time);
  const std::string resolve_url = hub::resolve_url(settings_.endpoint, settings_.repo, settings_.commit, file.path);
  // An empty file still takes one request, without a Range ("bytes=0-" of nothing is unsatisfiable): its
  // bytes are nothing, but access to them must be granted (a gated repo yields not even its empty files).
  const bool empty_file = file.size == 0;
  while (true) {
    if (stop_.stop_requested()) throw interrupted(file);
    if (task.cancelled || (!empty_file && task.position >= task.end)) return;
    const Sent sent = send(task, source, resolve_url);
    // A byte before each stall is no progress: such a server must use up the retries, not renew them.
    if (sent.received >= progress_bytes_) retrier.note_progress();
    if (sent.response.failure == http::TransportFailure::kCancelled || stop_.stop_requested()) {
      throw interrupted(file);
    }
    // The scheduler stops the file's other ranges and starts it over; nothing of this answer was written.
    if (task.file->restart_requested()) return;
    const http::RangeClassification verdict = http::classify_range_answer(http::RangeAnswer{
        sent.response.failure, sent.response.failure_message, sent.response.status, follower_.to_the_endpoint(sent.url),
        sent.file_changed, sent.rejection, task.position.load(), task.end.load(), file.size});
    if (verdict.verdict == http::RangeVerdict::kFileChanged || verdict.verdict == http::RangeVerdict::kComplete) {
      return;
    }
    if (task.cancelled) return;
    prepare_retry(task, source, sent, verdict, retrier);
  }
}

RangeFetcher::Sent RangeFetcher::send(RangeTask& task, BridgeFile& source, const std::string& resolve_url) {
  const RemoteFile& file = task.file->remote();
  const SignedUrlLease::Lease lease = source.signed_url.lease(stop_);
  // Whatever this attempt ends with, the connections waiting for its redirect stop waiting.
  ResolveGuard resolving(lease.resolving ? &source.signed_url : nullptr);
  RangeSink sink(task, batch_, settings_.rate_limiter, stop_);
  BridgeHops hops(task, source, sink, resolving, settings_, stop_);
  http::RequestSpec spec;
  spec.url = lease.cdn_url.empty() ? resolve_url : lease.cdn_url;
  http::FollowedAnswer followed;
  try {
    followed = follower_.get(std::move(spec), sink, stop_, hops);
  } catch (...) {
    sink.flush();  // what arrived before the error is kept for the resume
    throw;
  }
  if (followed.outcome == http::RedirectOutcome::kTooManyRedirects) {
    throw Error(ErrorCode::kNetwork, file.path + ": too many redirects", file.path);
  }
  if (followed.outcome == http::RedirectOutcome::kBadScheme) {
    throw Error(ErrorCode::kNetwork, file.path + ": redirected to an unsupported URL scheme", file.path);
  }
  resolving.finish();  // no redirect to a CDN came: the others stop waiting for one
  return Sent{std::move(followed.response), std::move(followed.url), sink.file_changed(), sink.rejection(),
              sink.received()};
}

void RangeFetcher::prepare_retry(RangeTask& task, BridgeFile& source, const Sent& sent,
                                 const http::RangeClassification& verdict, http::Retrier& retrier) {
  const RemoteFile& file = task.file->remote();
  const http::HttpResponse& response = sent.response;
  if (verdict.verdict == http::RangeVerdict::kGiveUp) {
    throw hub::error_from_response(response, hub::RequestContext{&settings_.repo, settings_.commit, file.path});
  }
  // An expired or revoked signed URL: the next attempt asks the Hub for a new one.
  if (verdict.verdict == http::RangeVerdict::kResolveAgain) source.signed_url.forget(sent.url);
  if (verdict.refusal && task.budget != nullptr) task.budget->note_refusal();
  if (verdict.push_back && task.budget != nullptr) task.budget->note_push_back();
  std::string reason = verdict.reason;
  const bool answered =
      response.failure == http::TransportFailure::kNone || response.failure == http::TransportFailure::kStoppedBySink;
  const std::optional<http::RequestedWait> requested = answered ? http::requested_wait(response) : std::nullopt;
  if (requested) reason += " (" + requested->why + ")";
  // The Hub's quota is the whole download's: the other connections hold their Hub requests until it resets.
  if (requested && requested->quota_used_up && settings_.hub_quota != nullptr && follower_.to_the_endpoint(sent.url)) {
    settings_.hub_quota->used_up_for(requested->wait);
  }
  const auto announce = [&](std::chrono::milliseconds delay) {
    progress_.on_retry(file, retrier.attempts_failed(), reason, delay);
  };
  if (retrier.wait_before_retry(verdict.attempt, requested ? std::optional(requested->wait) : std::nullopt, announce)) {
    return;
  }
  if (stop_.stop_requested()) throw interrupted(file);
  throw retries_used_up(file, retrier, reason);
}

}  // namespace hfget::transfer
