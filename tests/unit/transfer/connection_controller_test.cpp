// SPDX-License-Identifier: MIT
// The connection controller driven window by window against a simulated link: each connection moves at most
// a per-connection cap, all together at most a total cap, every connection costs a little (an uncapped link
// is slower with too many), and a server may push back above some count. The link is deterministic up to a
// small seeded jitter, so a test says where the controller ends, not how lucky it was.
#include "transfer/connection_controller.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace hfget::transfer {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kWindow = 0.5;  // seconds, as the sampler's

struct Link {
  double per_connection = 8 * kMiB;  // bytes/s one connection moves at most
  double total = 1.2e9;              // bytes/s all of them move at most
  std::size_t push_back_above = 0;   // 0: never; else connections past this many are refused
};

// The best count on a link: the fewest connections that reach its best rate.
double rate_of(const Link& link, std::size_t connections) {
  const double n = static_cast<double>(connections);
  return std::min(link.per_connection * n, link.total) * (1 - 0.001 * n);
}

std::size_t best_count(const Link& link, std::size_t ceiling) {
  std::size_t best = 1;
  for (std::size_t n = 1; n <= ceiling; ++n) {
    if (rate_of(link, n) > rate_of(link, best) * 1.0001) best = n;
  }
  return best;
}

// Runs the controller over the link for `seconds`; `link_at` may change the link with time. Returns every
// count it used, window by window.
struct Trace {
  std::vector<std::size_t> counts;
  std::size_t final_count = 0;
};

Trace drive(ConnectionController& controller, double seconds, const std::function<Link(double)>& link_at) {
  Trace run;
  std::uint32_t seed = 12345;
  for (double t = 0; t < seconds; t += kWindow) {
    const Link link = link_at(t);
    const std::size_t count = controller.count();
    seed = seed * 1664525U + 1013904223U;
    const double jitter = 1 + (static_cast<double>(seed >> 8) / 16777216.0 - 0.5) * 0.02;  // +-1 %
    ConnectionSample sample;
    sample.seconds = kWindow;
    sample.busy = count;
    sample.bytes = static_cast<std::uint64_t>(rate_of(link, count) * kWindow * jitter);
    if (link.push_back_above != 0 && count > link.push_back_above) sample.push_backs = count - link.push_back_above;
    if (const std::optional<ConnectionChange> change = controller.feed(sample)) {
      EXPECT_EQ(change->count, controller.count());
      EXPECT_FALSE(change->reason.empty());
    }
    run.counts.push_back(controller.count());
  }
  run.final_count = controller.count();
  return run;
}

Trace drive(ConnectionController& controller, double seconds, const Link& link) {
  return drive(controller, seconds, [&](double) { return link; });
}

std::size_t most_used(const Trace& run) {
  return *std::max_element(run.counts.begin(), run.counts.end());
}

TEST(ConnectionControllerTest, StartsAtSixteenOrAtTheRangesAvailable) {
  EXPECT_EQ(ConnectionController(ControllerSettings{}).count(), 16U);
  ControllerSettings few;
  few.ranges_available = 3;
  EXPECT_EQ(ConnectionController(few).count(), 3U);
  ControllerSettings low_ceiling;
  low_ceiling.ceiling = 2;
  EXPECT_EQ(ConnectionController(low_ceiling).count(), 2U);
}

TEST(ConnectionControllerTest, ClimbsToTheCeilingBehindAnEdgeCappingEachConnectionAtEightMiB) {
  const Link link{8 * kMiB, 1.2e9, 0};
  ConnectionController controller(ControllerSettings{});
  const Trace run = drive(controller, 120, link);
  EXPECT_EQ(best_count(link, 64), 64U);
  EXPECT_GE(run.final_count, 58U);  // within 10 % of the best
  EXPECT_LE(most_used(run), 64U);
}

TEST(ConnectionControllerTest, FillsACappedLinkInSecondsByDoublingWhileEachConnectionAddsAsMuch) {
  ConnectionController controller(ControllerSettings{});
  const Trace trace = drive(controller, 3.5, Link{8 * kMiB, 1.2e9, 0});
  EXPECT_EQ(trace.final_count, 64U);  // 16, 32, 64: a second each
}

TEST(ConnectionControllerTest, StopsWithinTenPercentOfTheBestCountAtFortyMiBPerConnection) {
  const Link link{40 * kMiB, 1.2e9, 0};
  ConnectionController controller(ControllerSettings{});
  const Trace run = drive(controller, 120, link);
  const auto best = static_cast<double>(best_count(link, 64));
  EXPECT_GE(static_cast<double>(run.final_count), best * 0.9) << "best " << best;
  EXPECT_LE(static_cast<double>(run.final_count), best * 1.1) << "best " << best;
}

TEST(ConnectionControllerTest, StaysLowOnALinkThatNoConnectionCapLimits) {
  const Link link{600 * kMiB, 1.2e9, 0};
  ConnectionController controller(ControllerSettings{});
  const Trace run = drive(controller, 300, link);
  EXPECT_LE(run.final_count, 8U);
  EXPECT_LE(most_used(run), 32U);  // one doubling tried, then given back
}

TEST(ConnectionControllerTest, BacksOffWhenTheServerPushesBackAndStaysUnderItsLimit) {
  const Link link{8 * kMiB, 1.2e9, 20};
  ConnectionController controller(ControllerSettings{});
  const Trace run = drive(controller, 600, link);
  EXPECT_LE(run.final_count, 20U);
  EXPECT_GE(run.final_count, 10U);
  // Over the run, past the first push-back, the count is above the server's limit only briefly (re-probes).
  const auto above = std::count_if(run.counts.begin() + 60, run.counts.end(), [](std::size_t c) { return c > 20; });
  EXPECT_LT(static_cast<double>(above), 0.05 * static_cast<double>(run.counts.size()));
}

TEST(ConnectionControllerTest, OnePushBackEpisodeCutsOnceNotDownToOne) {
  ConnectionController controller(ControllerSettings{});
  ConnectionSample refused;
  refused.seconds = kWindow;
  refused.busy = 16;
  refused.bytes = 8 << 20;
  refused.push_backs = 3;  // the connections above the cut keep retrying their refused ranges for a while
  for (int window = 0; window < 20; ++window) controller.feed(refused);  // the first cut and 9.5 s after it
  EXPECT_EQ(controller.count(), 12U) << "16 less a quarter, once";
  controller.feed(refused);  // 10 s after the cut: a new episode
  EXPECT_EQ(controller.count(), 9U);
}

TEST(ConnectionControllerTest, FollowsALinkWhoseConnectionsBecomeSlowerMidRun) {
  ConnectionController controller(ControllerSettings{});
  const Trace run = drive(controller, 300, [](double t) {
    return t < 100 ? Link{40 * kMiB, 1.2e9, 0} : Link{8 * kMiB, 1.2e9, 0};
  });
  EXPECT_LE(run.counts[190], 36U);  // settled for the first link
  EXPECT_GE(run.final_count, 58U);  // and re-probed up to the second's best
}

TEST(ConnectionControllerTest, FollowsALinkWhoseConnectionCapIsLiftedMidRun) {
  ConnectionController controller(ControllerSettings{});
  const Trace run = drive(controller, 400, [](double t) {
    return t < 100 ? Link{8 * kMiB, 1.2e9, 0} : Link{600 * kMiB, 1.2e9, 0};
  });
  EXPECT_GE(run.counts[190], 58U);
  EXPECT_LE(run.final_count, 16U);
}

TEST(ConnectionControllerTest, NeverExceedsTheCeiling) {
  ControllerSettings settings;
  settings.ceiling = 12;
  ConnectionController controller(settings);
  const Trace run = drive(controller, 300, Link{1 * kMiB, 1.2e9, 0});
  EXPECT_EQ(most_used(run), 12U);
  EXPECT_EQ(run.final_count, 12U);
}

TEST(ConnectionControllerTest, IgnoresTheTailOfADownloadWhereFewerConnectionsAreBusy) {
  ConnectionController controller(ControllerSettings{});
  drive(controller, 40, Link{8 * kMiB, 1.2e9, 0});  // settled and holding: the re-probe is 45 s away
  const std::size_t settled = controller.count();
  for (int window = 0; window < 200; ++window) {
    ConnectionSample tail;
    tail.seconds = kWindow;
    tail.busy = settled / 2;
    tail.bytes = static_cast<std::uint64_t>(8 * kMiB * static_cast<double>(tail.busy) * kWindow);
    EXPECT_FALSE(controller.feed(tail).has_value());
  }
  EXPECT_EQ(controller.count(), settled);
}

TEST(ConnectionControllerTest, GivesBackABatchWhoseConnectionsFindNoRange) {
  ControllerSettings from_eight;
  from_eight.start = 8;
  ConnectionController controller(from_eight);
  const Link link{8 * kMiB, 1.2e9, 0};
  std::size_t most = 0;
  for (int window = 0; window < 400; ++window) {
    const std::size_t count = controller.count();
    ConnectionSample sample;
    sample.seconds = kWindow;
    sample.busy = std::min<std::size_t>(count, 12);  // twelve files open, one range each
    sample.bytes = static_cast<std::uint64_t>(rate_of(link, sample.busy) * kWindow);
    controller.feed(sample);
    most = std::max(most, controller.count());
  }
  EXPECT_EQ(controller.count(), 8U);
  EXPECT_EQ(most, 16U);
}

TEST(ConnectionControllerTest, HoldsTheStartWhenFewerRangesAreOpenThanItsConnections) {
  ConnectionController controller(ControllerSettings{});
  ConnectionSample twelve_busy;
  twelve_busy.seconds = kWindow;
  twelve_busy.busy = 12;  // twelve files open, one range each
  twelve_busy.bytes = 100 << 20;
  for (int window = 0; window < 200; ++window) EXPECT_FALSE(controller.feed(twelve_busy).has_value());
  EXPECT_EQ(controller.count(), 16U);
}

TEST(ConnectionControllerTest, TakesNoDecisionOnWindowsInWhichNothingMovedYet) {
  ConnectionController controller(ControllerSettings{});
  ConnectionSample nothing;
  nothing.seconds = kWindow;
  nothing.busy = 16;
  for (int window = 0; window < 20; ++window) EXPECT_FALSE(controller.feed(nothing).has_value());
  EXPECT_EQ(controller.count(), 16U);
  const Trace trace = drive(controller, 20, Link{8 * kMiB, 1.2e9, 0});
  EXPECT_GE(most_used(trace), 58U);
}

TEST(ConnectionControllerTest, NeverGoesBelowOne) {
  ControllerSettings settings;
  settings.ceiling = 1;
  ConnectionController controller(settings);
  const Trace run = drive(controller, 120, Link{8 * kMiB, 1.2e9, 0});
  EXPECT_EQ(*std::min_element(run.counts.begin(), run.counts.end()), 1U);
  ConnectionController pushed(ControllerSettings{});
  const Trace refused = drive(pushed, 120, Link{8 * kMiB, 1.2e9, 1});
  EXPECT_GE(*std::min_element(refused.counts.begin(), refused.counts.end()), 1U);
  EXPECT_LE(refused.final_count, 2U);
}

}  // namespace
}  // namespace hfget::transfer
