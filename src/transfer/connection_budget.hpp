// SPDX-License-Identifier: MIT
// A server that limits the connections per file (a CDN answering 429, or 403 on a parallel range) refuses
// the extra ones; failing the file for it would be wrong, and hammering it with the same count would waste
// the retries. The source that saw the refusal reports it here; the scheduler reads the limit when it hands
// out ranges. Neither knows the other: the budget is the one thing they share about a file's connections.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace hfget::transfer {

/// How many connections may work on one file at once. Thread-safe.
class ConnectionBudget {
 public:
  static constexpr int kUnlimited = 1 << 20;

  /// A connection of the file was refused by the server (reported by the byte source).
  void note_refusal() noexcept { refusals_ += 1; }
  /// The server or the path shed load on a connection of the file (a refusal, 503, a reset): counted for the
  /// connection controller, which gives connections back for the whole download. The file's own limit is
  /// left to refusals: a reset says nothing of how many connections one file may have.
  void note_push_back() noexcept { push_backs_noted_.fetch_add(1, std::memory_order_relaxed); }
  /// Every push-back noted so far, never taken.
  std::uint64_t push_backs_noted() const noexcept { return push_backs_noted_.load(std::memory_order_relaxed); }
  /// The refusals noted since the last call, taken (for tests and diagnostics).
  int take_refusals() noexcept { return refusals_.exchange(0); }
  /// Folds the refusals noted since the last call into the limit: as many connections as the file had
  /// (`in_flight`) when it was refused, less one per refusal, at least one. The scheduler calls it before
  /// handing out ranges.
  void apply_refusals(int in_flight) noexcept {
    if (const int refusals = take_refusals(); refusals > 0)
      limit_ = std::max(1, std::min(limit_.load(), in_flight) - refusals);
  }
  int limit() const noexcept { return limit_; }

 private:
  std::atomic<int> limit_{kUnlimited};
  std::atomic<int> refusals_{0};
  std::atomic<std::uint64_t> push_backs_noted_{0};
};

}  // namespace hfget::transfer
