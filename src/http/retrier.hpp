// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>

#include "http/retry_policy.hpp"

namespace hfget::http {

/// Counts attempts of one operation and waits between them (exponential backoff with jitter, honouring
/// Retry-After). The wait ends early when the stop token fires. Progress resets the count: a transfer that
/// keeps moving is retried for as long as it keeps moving.
class Retrier {
 public:
  Retrier(int max_attempts, std::chrono::milliseconds base_delay, std::stop_token stop);

  /// Told the delay just before the wait starts, so that a log line announces the retry when it is decided
  /// rather than when it happens.
  using Announcer = std::function<void(std::chrono::milliseconds delay)>;

  /// Called after a failed attempt: false when the failure is permanent, attempts are used up, or we were
  /// stopped; otherwise announces and sleeps the backoff delay and returns true.
  bool wait_before_retry(const Attempt& attempt, std::optional<std::chrono::seconds> retry_after,
                         const Announcer& announce = {});
  /// The delay wait_before_retry chose last (for log lines).
  std::chrono::milliseconds last_delay() const noexcept { return last_delay_; }
  int attempts_failed() const noexcept { return failures_; }
  int max_attempts() const noexcept { return max_attempts_; }
  void note_progress() noexcept { failures_ = 0; }

 private:
  int max_attempts_;
  std::chrono::milliseconds base_delay_;
  std::stop_token stop_;
  int failures_ = 0;
  std::chrono::milliseconds last_delay_{0};
};

}  // namespace hfget::http
