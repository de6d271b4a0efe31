// SPDX-License-Identifier: MIT
#include "http/retrier.hpp"

#include <condition_variable>
#include <mutex>

namespace hfget::http {

Retrier::Retrier(int max_attempts, std::chrono::milliseconds base_delay, std::stop_token stop)
    : max_attempts_(max_attempts), base_delay_(base_delay), stop_(std::move(stop)) {}

bool Retrier::wait_before_retry(const Attempt& attempt, std::optional<std::chrono::seconds> retry_after) {
  ++failures_;
  if (stop_.stop_requested() || next_step(attempt) == NextStep::kGiveUp || failures_ >= max_attempts_) {
    return false;
  }
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  last_delay_ = backoff_delay(failures_, base_delay_, retry_after, unit(random_));
  return sleep_unless_stopped(last_delay_, stop_);
}

bool sleep_unless_stopped(std::chrono::milliseconds duration, const std::stop_token& stop) {
  std::mutex mutex;
  std::condition_variable_any wake;
  std::unique_lock lock(mutex);
  // The predicate never holds: the wait ends by timeout or by the stop request, and the result says which.
  wake.wait_for(lock, stop, duration, [] { return false; });
  return !stop.stop_requested();
}

}  // namespace hfget::http
