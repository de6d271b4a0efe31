// SPDX-License-Identifier: MIT
#include "transfer/stage_clock.hpp"

namespace hfget::transfer {
namespace {

double seconds_of(const StageClock::Total& total) {
  return static_cast<double>(total.load(std::memory_order_relaxed)) / 1e9;
}

}  // namespace

ConnectionTimes StageClock::seconds() const {
  return {.fetching = seconds_of(fetching_ns),
          .writing = seconds_of(writing_ns),
          .hashing = seconds_of(hashing_ns),
          .waiting_for_file = seconds_of(waiting_for_file_ns),
          .planning = seconds_of(planning_ns),
          .finishing = seconds_of(finishing_ns),
          .idle = seconds_of(idle_ns)};
}

}  // namespace hfget::transfer
