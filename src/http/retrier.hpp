// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>

#include "http/retry_policy.hpp"

namespace hfget::http {

/// Counts attempts of one operation and waits between them (exponential backoff with jitter, honouring
/// Retry-After). The wait ends early when the stop token fires. Progress resets the count and the clock: a
/// transfer that keeps moving (by progress_threshold() per attempt) is retried for as long as it moves, one
/// that does not gets `max_attempts` attempts and `max_time` from its start or its last progress, whichever
/// runs out first; a wait that would end past `max_time` is not started.
class Retrier {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  /// `max_time` 0: no time limit. `clock` is for tests.
  Retrier(
      int max_attempts, std::chrono::milliseconds base_delay, std::stop_token stop,
      std::chrono::seconds max_time = std::chrono::seconds(0),
      Clock clock = [] { return std::chrono::steady_clock::now(); });

  /// Told the delay just before the wait starts, so that a log line announces the retry when it is decided
  /// rather than when it happens.
  using Announcer = std::function<void(std::chrono::milliseconds delay)>;

  /// Called after a failed attempt: false when the failure is permanent, attempts or time are used up, or
  /// we were stopped; otherwise announces and sleeps the backoff delay and returns true.
  bool wait_before_retry(const Attempt& attempt, std::optional<std::chrono::seconds> retry_after,
                         const Announcer& announce = {});
  /// The delay wait_before_retry chose last (for log lines).
  std::chrono::milliseconds last_delay() const noexcept { return last_delay_; }
  int attempts_failed() const noexcept { return failures_; }
  int max_attempts() const noexcept { return max_attempts_; }
  /// Whether the last wait_before_retry gave up because the next retry would pass `max_time`.
  bool out_of_time() const noexcept { return out_of_time_; }
  std::chrono::seconds max_time() const noexcept { return max_time_; }
  void note_progress();

 private:
  int max_attempts_;
  std::chrono::milliseconds base_delay_;
  std::stop_token stop_;
  std::chrono::seconds max_time_;
  Clock clock_;
  std::chrono::steady_clock::time_point since_;  // the start, or the last progress
  int failures_ = 0;
  bool out_of_time_ = false;
  std::chrono::milliseconds last_delay_{0};
};

}  // namespace hfget::http
