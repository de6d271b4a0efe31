// SPDX-License-Identifier: MIT
#include "transfer/connection_steering.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "util/interruptible_sleep.hpp"

namespace hfget::transfer {

ConnectionSteering::ConnectionSteering(ConnectionPool& pool, const ChunkScheduler& scheduler, ProgressSink& progress,
                                       const SteeringSettings& settings)
    : pool_(pool),
      scheduler_(scheduler),
      progress_(progress),
      window_(settings.window),
      controller_(settings.controller),
      bytes_before_start_(scheduler.bytes_received()),
      push_backs_before_start_(scheduler.push_backs_noted()),
      started_at_(std::chrono::steady_clock::now()) {
  pool_.set_connections(controller_.count());
  progress_.on_connections(controller_.count(), controller_.start_reason());
  thread_ = std::jthread([this](const std::stop_token& stop) { run(stop); });
}

void ConnectionSteering::run(const std::stop_token& stop) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point last = started_at_;
  std::uint64_t bytes = bytes_before_start_;
  std::uint64_t push_backs = push_backs_before_start_;
  while (util::sleep_unless_stopped(window_, stop)) {
    const Clock::time_point now = Clock::now();
    const std::uint64_t bytes_now = scheduler_.bytes_received();
    const std::uint64_t push_backs_now = scheduler_.push_backs_noted();
    ConnectionSample sample;
    // A discarded range can make the total go back: such a window moved nothing.
    sample.bytes = bytes_now > bytes ? bytes_now - bytes : 0;
    sample.seconds = std::chrono::duration<double>(now - last).count();
    sample.busy = std::min(scheduler_.ranges_in_flight(), controller_.count());
    sample.push_backs = push_backs_now - push_backs;
    last = now;
    bytes = bytes_now;
    push_backs = push_backs_now;
    // Nothing may leave the thread (std::terminate: no error line, no state record). A count that cannot be
    // applied (no thread could be started) ends the steering: the download goes on with what it has.
    try {
      if (const std::optional<ConnectionChange> change = controller_.feed(sample)) {
        spdlog::info("connections: {} ({})", change->count, change->reason);
        pool_.set_connections(change->count);
        progress_.on_connections(change->count, change->reason);
      }
    } catch (const std::exception& error) {
      spdlog::warn("connections: steering stopped at {} ({})", pool_.connections(), error.what());
      return;
    }
  }
}

}  // namespace hfget::transfer
