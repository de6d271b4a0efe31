// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <mutex>
#include <stop_token>

namespace hfget::transfer {

/// The Hub's request quota as one download sees it. A 429 whose RateLimit header says the quota is used up
/// speaks for every request of this client, not only the one it answered: the other connections hold their
/// next request to the Hub until the reset, rather than each spending a request (which counts against the
/// same quota) to learn the same thing. Requests to the CDN are not held. Thread-safe.
class HubQuota {
 public:
  /// The quota is used up for `wait` from now (a later reset already recorded is kept).
  void used_up_for(std::chrono::milliseconds wait);
  /// Waits until the quota is back; at once when it is. Returns false when `stop` fired first.
  bool wait_until_available(const std::stop_token& stop) const;

 private:
  mutable std::mutex mutex_;
  std::chrono::steady_clock::time_point available_at_{};
};

}  // namespace hfget::transfer
