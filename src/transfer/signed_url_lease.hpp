// SPDX-License-Identifier: MIT
#pragma once

#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <string>

namespace hfget::transfer {

/// The signed CDN URL the Hub redirected a file to, shared by the file's connections until the CDN refuses
/// it; and who is asking the Hub for it right now. One /resolve/ request per file rather than one per
/// connection saves the Hub's rate-limit quota. Thread-safe.
class SignedUrlLease {
 public:
  /// `one_resolve_at_a_time`: false for a file the Hub serves itself (not LFS): there is no CDN URL to
  /// share, and connections never wait for each other's resolve.
  explicit SignedUrlLease(bool one_resolve_at_a_time = true) : one_resolve_at_a_time_(one_resolve_at_a_time) {}

  /// What a connection about to fetch a range should do about the CDN URL.
  struct Lease {
    std::string cdn_url;     // use it; empty: ask the Hub
    bool resolving = false;  // this connection asks the Hub; call resolve_finished() after
  };
  /// The shared URL; or, when there is none, the task of resolving it — unless another connection is asking
  /// the Hub right now: then waits (at most a few seconds, or until `stop`) for its answer.
  Lease lease(const std::stop_token& stop);
  /// A redirect to the CDN came: the file's connections use it from now on (and stop waiting).
  void set(const std::string& url);
  /// The CDN refused `url` (an expired signature): the next connection asks the Hub again.
  void forget(const std::string& url);
  /// Ends this connection's resolve (the redirect came, or the attempt failed): others stop waiting.
  void resolve_finished();

 private:
  const bool one_resolve_at_a_time_;
  std::mutex mutex_;
  std::string cdn_url_;
  bool resolving_ = false;  // a connection is asking the Hub for cdn_url_
  std::condition_variable_any changed_;
};

/// Ends a connection's resolve when the attempt is over, however it ends.
class ResolveGuard {
 public:
  explicit ResolveGuard(SignedUrlLease* lease) : lease_(lease) {}
  ResolveGuard(const ResolveGuard&) = delete;
  ResolveGuard& operator=(const ResolveGuard&) = delete;
  ~ResolveGuard() { finish(); }
  void finish() {
    if (lease_ != nullptr) lease_->resolve_finished();
    lease_ = nullptr;
  }

 private:
  SignedUrlLease* lease_;
};

}  // namespace hfget::transfer
