// SPDX-License-Identifier: MIT
// --max-speed: one limit for the whole download, however many connections share it. Each connection's
// received bytes wait here, in libcurl's write callback, before they are taken: while a connection waits,
// libcurl does not read its socket, the kernel's receive window fills and the server slows down, so the
// bytes are limited where they are read. Sleeping in the callback rather than pausing the transfer
// (CURL_WRITEFUNC_PAUSE) is enough because every connection owns its thread and its handle: a sleep holds
// that connection alone, and no other code has to unpause it at the right moment.
//
// The limiter is a virtual-clock scheduler: a shared timeline on which each call books the next slot, its
// bytes' worth of time at the asked rate, and then sleeps until that slot has ended. Bookings are served in
// the order they are made, so the connections that have bytes waiting take turns and none can starve: a
// connection reads its socket again after the others' one read each, (connections × read) / rate. Under a
// low limit the download uses fewer connections (connections_for), so that this stays about 2 s, far inside
// the --stall-timeout window in which curl's --speed-limit would drop it. The timeline does not depend on when
// the sleepers wake: a late wake-up is made good by the next bookings, within the burst allowance, so the
// achieved rate is the asked one as long as the connections can deliver it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stop_token>

namespace hfget::transfer {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  /// How the limiter reads the time and waits: the steady clock and a sleep in short slices in the
  /// program, a simulated clock in the unit tests.
  struct Timing {
    std::function<Clock::time_point()> now;
    /// Returns true once `deadline` has passed, false as soon as `stop` fires (whichever comes first).
    std::function<bool(Clock::time_point deadline, const std::stop_token& stop)> sleep_until;
  };
  /// The steady clock; sleeps in slices of at most kWakeInterval, so that a stop ends a wait promptly.
  static Timing steady_timing();

  /// What an idle limiter may let through at once, in time at the asked rate: the burst after a pause, and
  /// the slack that makes good a connection woken late.
  static constexpr std::chrono::milliseconds kBurst{100};
  /// How often a sleeping connection looks at its stop token.
  static constexpr std::chrono::milliseconds kWakeInterval{10};

  /// Under a limit each connection gets at least this much: more connections bring no gain, and a
  /// connection's socket read (up to 512 KiB) must not wait long for its turn.
  static constexpr std::uint64_t kMinBytesPerConnection = 256 << 10;
  /// The connections worth opening under `bytes_per_second` (0: no limit): at most `connections`, at least one.
  /// `floor_per_connection`: the least rate one connection may get (above the --speed-limit it is dropped under).
  static std::size_t connections_for(std::uint64_t bytes_per_second, std::size_t connections,
                                     std::uint64_t floor_per_connection = kMinBytesPerConnection);

  /// `bytes_per_second` 0: no limit (acquire never waits).
  explicit RateLimiter(std::uint64_t bytes_per_second, Timing timing = steady_timing());
  RateLimiter(const RateLimiter&) = delete;
  RateLimiter& operator=(const RateLimiter&) = delete;

  /// Waits until `bytes` more may pass. Returns false when `stop` fired first: the caller stops reading.
  /// Thread-safe; callers are served in the order they booked, a slice at a time.
  bool acquire(std::uint64_t bytes, const std::stop_token& stop);

  std::uint64_t bytes_per_second() const noexcept { return bytes_per_second_; }
  /// The most bytes one booking takes (about 100 ms at the rate, 16 KiB to 16 MiB): a larger read is booked
  /// in slices, each after the others' next turns.
  std::uint64_t slice_bytes() const noexcept { return slice_bytes_; }

 private:
  // Books `bytes` on the timeline; returns the end of their slot, when they may pass.
  Clock::time_point book(std::uint64_t bytes);

  const std::uint64_t bytes_per_second_;
  const std::uint64_t slice_bytes_;
  const Timing timing_;
  std::mutex mutex_;
  Clock::time_point next_free_{};  // the end of the last booked slot
  double carry_nanoseconds_ = 0;   // what the bookings' whole nanoseconds left over, so that none is lost
};

}  // namespace hfget::transfer
