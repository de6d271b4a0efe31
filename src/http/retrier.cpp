// SPDX-License-Identifier: MIT
#include "http/retrier.hpp"

#include "util/interruptible_sleep.hpp"
#include "util/thread_random.hpp"

namespace hfget::http {

Retrier::Retrier(int max_attempts, std::chrono::milliseconds base_delay, std::stop_token stop,
                 std::chrono::seconds max_time, Clock clock)
    : max_attempts_(max_attempts),
      base_delay_(base_delay),
      stop_(std::move(stop)),
      max_time_(max_time),
      clock_(std::move(clock)),
      since_(clock_()) {}

void Retrier::note_progress() {
  failures_ = 0;
  since_ = clock_();
}

bool Retrier::wait_before_retry(const Attempt& attempt, std::optional<std::chrono::seconds> retry_after,
                                const Announcer& announce) {
  ++failures_;
  out_of_time_ = false;
  if (stop_.stop_requested() || next_step(attempt) == NextStep::kGiveUp || failures_ >= max_attempts_) {
    return false;
  }
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const std::chrono::milliseconds delay =
      backoff_delay(failures_, base_delay_, retry_after, unit(util::thread_random()));
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(clock_() - since_);
  if (!retry_fits(waited, delay, max_time_)) {
    out_of_time_ = true;
    return false;
  }
  last_delay_ = delay;
  if (announce) announce(last_delay_);
  return util::sleep_unless_stopped(last_delay_, stop_);
}

}  // namespace hfget::http
