// SPDX-License-Identifier: MIT
#include "transfer/hub_quota.hpp"

#include <algorithm>

#include "util/interruptible_sleep.hpp"

namespace hfget::transfer {

void HubQuota::used_up_for(std::chrono::milliseconds wait) {
  const std::lock_guard guard(mutex_);
  available_at_ = std::max(available_at_, std::chrono::steady_clock::now() + wait);
}

bool HubQuota::wait_until_available(const std::stop_token& stop) const {
  // Bounded by the waits recorded (each at most http::kMaxRetryAfter); re-read after each, since another
  // connection may have been told of a later reset meanwhile.
  while (true) {
    std::chrono::steady_clock::time_point until;
    {
      const std::lock_guard guard(mutex_);
      until = available_at_;
    }
    const auto now = std::chrono::steady_clock::now();
    if (until <= now) return true;
    if (!util::sleep_unless_stopped(std::chrono::ceil<std::chrono::milliseconds>(until - now), stop)) return false;
  }
}

}  // namespace hfget::transfer
