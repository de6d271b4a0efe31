// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "hfget/download.hpp"

namespace hfget::transfer {

/// Where the connections' time goes, summed over every connection as it is spent (ConnectionTimes is the
/// report's copy). Each stage's total is an atomic of its own: a connection adds to it once per write or
/// request, never per byte, so the clock costs nothing a profile would notice.
struct StageClock {
  using Total = std::atomic<std::uint64_t>;  // nanoseconds
  Total fetching_ns{0};
  Total writing_ns{0};
  Total hashing_ns{0};
  Total waiting_for_file_ns{0};
  Total planning_ns{0};
  Total finishing_ns{0};
  Total idle_ns{0};

  ConnectionTimes seconds() const;
};

/// Adds the time from its making to its end to one stage of `clock`; with no clock it counts nothing.
class StageTimer {
 public:
  StageTimer(StageClock* clock, StageClock::Total StageClock::*stage) noexcept
      : total_(clock != nullptr ? &(clock->*stage) : nullptr),
        started_(clock != nullptr ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}) {}
  ~StageTimer() {
    if (total_ == nullptr) return;
    const auto spent = std::chrono::steady_clock::now() - started_;
    total_->fetch_add(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count()),
                      std::memory_order_relaxed);
  }
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

 private:
  StageClock::Total* total_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace hfget::transfer
