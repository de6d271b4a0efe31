// SPDX-License-Identifier: MIT
// The booking is the only shared step, a few arithmetic operations under a mutex: at 1 GB/s with 512 KiB
// socket reads that is about two thousand a second. A download without --max-speed has no limiter at all.
#include "transfer/rate_limiter.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

namespace hfget::transfer {
namespace {

constexpr std::uint64_t kMinSliceBytes = 16 << 10;
constexpr std::uint64_t kMaxSliceBytes = 16 << 20;
constexpr double kNanosecondsPerSecond = 1e9;

// About 100 ms at the rate. A socket read is booked whole when it fits (from 5 MB/s on, libcurl's 512 KiB
// reads always do), so the connections' reads follow each other evenly; slicing it would gain nothing (the
// connection reads its socket again only once the whole read has passed) and would keep connections that
// started together in step, reading their sockets at the same moments.
std::uint64_t slice_for(std::uint64_t bytes_per_second) {
  return std::clamp<std::uint64_t>(bytes_per_second / 10, kMinSliceBytes, kMaxSliceBytes);
}

bool sleep_in_slices(RateLimiter::Clock::time_point deadline, const std::stop_token& stop) {
  while (!stop.stop_requested()) {
    const RateLimiter::Clock::time_point now = RateLimiter::Clock::now();
    if (now >= deadline) return true;
    std::this_thread::sleep_for(std::min<RateLimiter::Clock::duration>(deadline - now, RateLimiter::kWakeInterval));
  }
  return false;
}

}  // namespace

std::size_t RateLimiter::connections_for(std::uint64_t bytes_per_second, std::size_t connections,
                                         std::uint64_t floor_per_connection) {
  if (bytes_per_second == 0) return connections;
  const std::uint64_t floor = std::max<std::uint64_t>(floor_per_connection, 1);
  return static_cast<std::size_t>(
      std::clamp<std::uint64_t>(bytes_per_second / floor, 1, std::max<std::size_t>(connections, 1)));
}

RateLimiter::Timing RateLimiter::steady_timing() {
  return Timing{[] { return Clock::now(); }, &sleep_in_slices};
}

RateLimiter::RateLimiter(std::uint64_t bytes_per_second, Timing timing)
    : bytes_per_second_(bytes_per_second), slice_bytes_(slice_for(bytes_per_second)), timing_(std::move(timing)) {}

bool RateLimiter::acquire(std::uint64_t bytes, const std::stop_token& stop) {
  if (bytes_per_second_ == 0) return true;
  while (bytes > 0) {
    if (stop.stop_requested()) return false;
    const std::uint64_t slice = std::min(bytes, slice_bytes_);
    if (!timing_.sleep_until(book(slice), stop)) return false;
    bytes -= slice;
  }
  return true;
}

RateLimiter::Clock::time_point RateLimiter::book(std::uint64_t bytes) {
  const std::lock_guard guard(mutex_);
  const Clock::time_point now = timing_.now();
  // An idle timeline starts again from now, less the burst allowance: unused time is not saved up.
  if (next_free_ < now - kBurst) {
    next_free_ = now - kBurst;
    carry_nanoseconds_ = 0;
  }
  const double cost =
      static_cast<double>(bytes) * kNanosecondsPerSecond / static_cast<double>(bytes_per_second_) + carry_nanoseconds_;
  const double whole = std::floor(cost);
  carry_nanoseconds_ = cost - whole;
  next_free_ += std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(static_cast<std::int64_t>(whole)));
  return next_free_;
}

}  // namespace hfget::transfer
