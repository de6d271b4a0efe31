// SPDX-License-Identifier: MIT
// The connection controller decides from samples; something has to take them and apply its answers. This is
// that: one thread per adaptive download that every window reads what the scheduler moved, how many ranges
// are in flight and how often the server pushed back (refusals, 503s, resets), feeds the controller, and changes the
// pool's count. It is the only caller of ConnectionPool::set_connections while it runs: a count changed from a progress
// callback could deadlock (IncomingFile reports progress under its own mutex).
#pragma once

#include <chrono>
#include <thread>

#include "hfget/progress.hpp"
#include "transfer/chunk_scheduler.hpp"
#include "transfer/connection_controller.hpp"
#include "transfer/connection_pool.hpp"

namespace hfget::transfer {

struct SteeringSettings {
  ControllerSettings controller;
  std::chrono::milliseconds window{500};
};

/// Steers `pool` from the moment it is constructed (it sets the starting count and reports it) until it is
/// destroyed (the thread stops at once: every wait is bounded by the stop request). The pool, the scheduler
/// and the sink must outlive it.
class ConnectionSteering {
 public:
  ConnectionSteering(ConnectionPool& pool, const ChunkScheduler& scheduler, ProgressSink& progress,
                     const SteeringSettings& settings);
  ~ConnectionSteering() = default;  // the jthread asks its loop to stop, then joins it
  ConnectionSteering(const ConnectionSteering&) = delete;
  ConnectionSteering& operator=(const ConnectionSteering&) = delete;

 private:
  void run(const std::stop_token& stop);

  ConnectionPool& pool_;
  const ChunkScheduler& scheduler_;
  ProgressSink& progress_;
  std::chrono::milliseconds window_;
  ConnectionController controller_;  // used by the thread alone once it runs
  // What the scheduler had counted before the first connection started, taken in the constructor: the
  // thread starts later, and a push-back (or bytes) in between would otherwise be its baseline, never seen.
  std::uint64_t bytes_before_start_ = 0;
  std::uint64_t push_backs_before_start_ = 0;
  std::chrono::steady_clock::time_point started_at_;
  std::jthread thread_;  // last: starts once everything above is built
};

}  // namespace hfget::transfer
