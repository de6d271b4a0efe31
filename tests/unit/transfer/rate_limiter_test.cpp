// SPDX-License-Identifier: MIT
// --max-speed's limiter on a simulated clock: the rate held over 10 s windows from 10 MB/s to 1 GB/s, by one
// connection and by many sharing it (each taking its turns, none waiting long enough to be dropped as too
// slow), late wake-ups made good, a small burst after a pause, a stop ending a wait at once, and 0 as no
// limit. The simulated clock moves only when every connection sleeps, so the results do not depend on how
// busy the machine running the test is.
#include "transfer/rate_limiter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <stop_token>
#include <thread>
#include <vector>

namespace hfget::transfer {
namespace {

using Clock = RateLimiter::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::uint64_t kSocketRead = 512 << 10;  // what libcurl hands the write callback at most

// A clock for `participants` threads: a sleeper waits until the clock reaches its deadline, and the clock
// jumps to the earliest deadline once every participant sleeps. With `late_by_up_to`, each sleep ends up to
// that much after its deadline (a scheduler that wakes threads late), varied deterministically.
class SimulatedTime {
 public:
  explicit SimulatedTime(std::size_t participants, Clock::duration late_by_up_to = {})
      : active_(participants), late_by_up_to_(late_by_up_to) {}

  RateLimiter::Timing timing() {
    return RateLimiter::Timing{
        [this] { return now(); },
        [this](Clock::time_point deadline, const std::stop_token& stop) { return sleep_until(deadline, stop); }};
  }

  Clock::time_point now() const {
    const std::lock_guard guard(mutex_);
    return now_;
  }
  Clock::duration elapsed() const { return now() - Clock::time_point{}; }

  // Time passes with no participant asking for bytes.
  void advance(Clock::duration idle) {
    const std::lock_guard guard(mutex_);
    now_ += idle;
  }

  // A participant is done: the clock no longer waits for it to sleep.
  void leave() {
    const std::lock_guard guard(mutex_);
    --active_;
    advance_if_all_asleep();
  }

 private:
  bool sleep_until(Clock::time_point deadline, const std::stop_token& stop) {
    std::unique_lock lock(mutex_);
    if (deadline <= now_) return true;  // as a real sleep into the past: no wait, no lateness
    if (late_by_up_to_ > Clock::duration::zero()) deadline += (late_by_up_to_ * (++sleeps_ % 7)) / 6;
    const auto mine = sleepers_.insert(deadline);
    advance_if_all_asleep();
    const bool woke = changed_.wait(lock, stop, [&] { return now_ >= deadline; });
    sleepers_.erase(mine);
    return woke;
  }

  void advance_if_all_asleep() {
    if (sleepers_.empty() || sleepers_.size() < active_) return;
    now_ = std::max(now_, *sleepers_.begin());
    changed_.notify_all();
  }

  mutable std::mutex mutex_;
  std::condition_variable_any changed_;
  Clock::time_point now_{};
  std::multiset<Clock::time_point> sleepers_;
  std::size_t active_;
  Clock::duration late_by_up_to_;
  std::uint64_t sleeps_ = 0;
};

struct Release {
  Clock::time_point at;
  std::uint64_t bytes;
  std::size_t connection;
};

// `connections` threads, each asking for kSocketRead at a time until `duration` of simulated time has
// passed; returns every release, in time order.
std::vector<Release> run_connections(std::uint64_t rate, std::size_t connections, Clock::duration duration,
                                     Clock::duration late_by_up_to = {}) {
  SimulatedTime time(connections, late_by_up_to);
  RateLimiter limiter(rate, time.timing());
  std::mutex mutex;
  std::vector<Release> releases;
  {
    std::vector<std::jthread> threads;
    for (std::size_t c = 0; c < connections; ++c) {
      threads.emplace_back([&, c] {
        while (time.elapsed() < duration) {
          EXPECT_TRUE(limiter.acquire(kSocketRead, {}));
          const std::lock_guard guard(mutex);
          releases.push_back({time.now(), kSocketRead, c});
        }
        time.leave();
      });
    }
  }
  std::stable_sort(releases.begin(), releases.end(), [](const Release& a, const Release& b) { return a.at < b.at; });
  return releases;
}

std::uint64_t bytes_within(const std::vector<Release>& releases, Clock::time_point from, Clock::time_point to) {
  std::uint64_t bytes = 0;
  for (const Release& release : releases) bytes += release.at > from && release.at <= to ? release.bytes : 0;
  return bytes;
}

// Every 10 s window from the start to `duration`, in steps of 250 ms: the bytes released within it, as a
// fraction of what the rate allows in 10 s.
std::vector<double> ten_second_windows(const std::vector<Release>& releases, std::uint64_t rate,
                                       Clock::duration duration) {
  std::vector<double> ratios;
  const Clock::time_point start{};
  for (Clock::duration from{}; from + seconds(10) <= duration; from += milliseconds(250)) {
    const std::uint64_t bytes = bytes_within(releases, start + from, start + from + seconds(10));
    ratios.push_back(static_cast<double>(bytes) / (static_cast<double>(rate) * 10.0));
  }
  return ratios;
}

void expect_rate_held(const std::vector<Release>& releases, std::uint64_t rate, Clock::duration duration) {
  const std::vector<double> windows = ten_second_windows(releases, rate, duration);
  ASSERT_FALSE(windows.empty());
  for (const double ratio : windows) {
    // The target is 5 %; the simulation leaves only the burst allowance and one read per connection.
    EXPECT_NEAR(ratio, 1.0, 0.02) << "bytes in a 10 s window against the rate × 10 s";
  }
}

class RateLimiterOverRates : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(RateLimiterOverRates, OneConnectionIsHeldToTheRateInEveryTenSecondWindow) {
  const std::uint64_t rate = GetParam();
  const auto duration = seconds(12);
  expect_rate_held(run_connections(rate, 1, duration), rate, duration);
}

TEST_P(RateLimiterOverRates, SixteenConnectionsTogetherAreHeldToTheRateInEveryTenSecondWindow) {
  const std::uint64_t rate = GetParam();
  const auto duration = seconds(12);
  expect_rate_held(run_connections(rate, 16, duration), rate, duration);
}

INSTANTIATE_TEST_SUITE_P(TenMegabytesToOneGigabytePerSecond, RateLimiterOverRates,
                         ::testing::Values(10'000'000, 100'000'000, 1'000'000'000),
                         [](const ::testing::TestParamInfo<std::uint64_t>& rate) {
                           return std::to_string(rate.param / 1'000'000) + "MBps";
                         });

TEST(RateLimiter, ConnectionsWokenLateStillGetTheWholeRate) {
  const std::uint64_t rate = 100'000'000;
  const auto duration = seconds(12);
  // Up to 3 ms late on every sleep, where a socket read lasts 5 ms at the rate: without the slack the
  // rate would drop by a third.
  expect_rate_held(run_connections(rate, 1, duration, milliseconds(3)), rate, duration);
  expect_rate_held(run_connections(rate, 8, duration, milliseconds(3)), rate, duration);
}

TEST(RateLimiter, ConnectionsSharingTheLimitTakeTurnsSoThatNoneStarves) {
  const std::uint64_t rate = 10'000'000;
  const std::size_t connections = 32;
  const std::vector<Release> releases = run_connections(rate, connections, seconds(20));
  std::map<std::size_t, std::uint64_t> bytes;
  std::map<std::size_t, Clock::time_point> last;
  Clock::duration longest_wait{};
  for (const Release& release : releases) {
    bytes[release.connection] += release.bytes;
    const Clock::time_point previous =
        last.contains(release.connection) ? last[release.connection] : Clock::time_point{};
    longest_wait = std::max(longest_wait, release.at - previous);
    last[release.connection] = release.at;
  }
  ASSERT_EQ(bytes.size(), connections);
  const auto [fewest, most] =
      std::minmax_element(bytes.begin(), bytes.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  EXPECT_GE(static_cast<double>(fewest->second), 0.9 * static_cast<double>(most->second)) << "an even share";
  // A turn for each of the others, a socket read each: 32 × 512 KiB at 10 MB/s is 1.7 s, well inside
  // curl's --stall-timeout (60 s) in which a connection under --speed-limit is dropped.
  EXPECT_LE(longest_wait, milliseconds(2000));
}

TEST(RateLimiter, APauseIsNotSavedUpForABurstLaterOn) {
  const std::uint64_t rate = 10'000'000;
  SimulatedTime time(1);
  RateLimiter limiter(rate, time.timing());
  const auto burst_bytes = [&] {
    // What passes without the clock moving: the burst allowance, and the slice that reaches past it.
    const Clock::time_point start = time.now();
    std::uint64_t passed = 0;
    while (time.now() == start) {
      EXPECT_TRUE(limiter.acquire(4096, {}));
      if (time.now() == start) passed += 4096;
    }
    return passed;
  };
  const auto allowance = static_cast<std::uint64_t>(static_cast<double>(rate) * 0.1);  // kBurst at the rate
  EXPECT_LE(burst_bytes(), allowance + limiter.slice_bytes()) << "at the start";
  time.advance(seconds(30));
  EXPECT_LE(burst_bytes(), allowance + limiter.slice_bytes()) << "after 30 s idle, not 30 s worth";
  EXPECT_LE(RateLimiter::kBurst, milliseconds(100)) << "the burst stays under 100 ms worth of bytes";
}

TEST(RateLimiter, AStopEndsAWaitAtOnce) {
  RateLimiter limiter(1024);  // the real clock: a MiB would take 17 minutes
  std::stop_source stop;
  const Clock::time_point started = Clock::now();
  std::jthread stopper([&] {
    std::this_thread::sleep_for(milliseconds(50));
    stop.request_stop();
  });
  EXPECT_FALSE(limiter.acquire(1 << 20, stop.get_token()));
  EXPECT_LT(Clock::now() - started, seconds(5)) << "a stop is seen within a wake interval (10 ms), not at the end";
}

TEST(RateLimiter, AStopBeforeTheCallLetsNothingThrough) {
  SimulatedTime time(1);
  RateLimiter limiter(10'000'000, time.timing());
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(limiter.acquire(1, stop.get_token()));
}

TEST(RateLimiter, ZeroIsNoLimitAndNeverWaits) {
  bool slept = false;
  RateLimiter limiter(0, RateLimiter::Timing{[] { return Clock::time_point{}; },
                                             [&](Clock::time_point, const std::stop_token&) { return slept = true; }});
  EXPECT_TRUE(limiter.acquire(std::uint64_t{1} << 40, {}));
  EXPECT_FALSE(slept);
}

TEST(RateLimiter, SlicesAreAboutAHundredMillisecondsAtTheRate) {
  EXPECT_EQ(RateLimiter(10'000'000).slice_bytes(), 1'000'000u);
  EXPECT_EQ(RateLimiter(1000).slice_bytes(), 16u << 10) << "at least 16 KiB";
  EXPECT_EQ(RateLimiter(1'000'000'000).slice_bytes(), 16u << 20) << "at most 16 MiB";
}

TEST(RateLimiter, ALowLimitIsSharedByFewerConnections) {
  EXPECT_EQ(RateLimiter::connections_for(0, 16), 16u) << "no limit";
  EXPECT_EQ(RateLimiter::connections_for(20 << 20, 16), 16u);
  EXPECT_EQ(RateLimiter::connections_for(1 << 20, 16), 4u) << "256 KiB/s each";
  EXPECT_EQ(RateLimiter::connections_for(50'000, 16), 1u) << "at least one";
  EXPECT_EQ(RateLimiter::connections_for(16 << 20, 64, 2 << 20), 8u) << "twice a --speed-limit of 1m each";
}

}  // namespace
}  // namespace hfget::transfer
