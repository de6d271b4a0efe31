// SPDX-License-Identifier: MIT
#include "http/retrier.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <stop_token>
#include <vector>

namespace hfget::http {
namespace {

using std::chrono::milliseconds;

const Attempt kTransient{TransportFailure::kConnectionLost, 0};
const Attempt kPermanent{TransportFailure::kNone, 404};

// A zero base delay makes every backoff 0 ms, so no test here waits.

TEST(Retrier, RetriesATransientFailureUntilAttemptsAreUsedUp) {
  Retrier retrier(3, milliseconds(0), {});
  EXPECT_TRUE(retrier.wait_before_retry(kTransient, std::nullopt));
  EXPECT_TRUE(retrier.wait_before_retry(kTransient, std::nullopt));
  EXPECT_FALSE(retrier.wait_before_retry(kTransient, std::nullopt));
  EXPECT_EQ(retrier.attempts_failed(), 3);
  EXPECT_EQ(retrier.last_delay(), milliseconds(0));
}

TEST(Retrier, GivesUpAtOnceOnAPermanentFailure) {
  Retrier retrier(8, milliseconds(1000), {});
  EXPECT_FALSE(retrier.wait_before_retry(kPermanent, std::nullopt));
  EXPECT_FALSE(retrier.wait_before_retry({TransportFailure::kTls, 0}, std::nullopt));
}

TEST(Retrier, GivesUpAtOnceWhenStopped) {
  std::stop_source stop;
  stop.request_stop();
  Retrier retrier(8, milliseconds(1000), stop.get_token());
  EXPECT_FALSE(retrier.wait_before_retry(kTransient, std::nullopt));
}

TEST(Retrier, OneAttemptMeansNoRetry) {
  Retrier retrier(1, milliseconds(1000), {});
  EXPECT_FALSE(retrier.wait_before_retry(kTransient, std::nullopt));
}

TEST(Retrier, AnnouncesEachRetryWithItsDelayBeforeWaiting) {
  Retrier retrier(3, milliseconds(0), {});
  std::vector<milliseconds> announced;
  const Retrier::Announcer announce = [&](milliseconds delay) {
    EXPECT_EQ(delay, retrier.last_delay());
    announced.push_back(delay);
  };
  EXPECT_TRUE(retrier.wait_before_retry(kTransient, std::nullopt, announce));
  EXPECT_TRUE(retrier.wait_before_retry(kTransient, std::nullopt, announce));
  EXPECT_FALSE(retrier.wait_before_retry(kTransient, std::nullopt, announce));  // no retry left: nothing to announce
  EXPECT_FALSE(retrier.wait_before_retry(kPermanent, std::nullopt, announce));
  EXPECT_EQ(announced.size(), 2U);
}

TEST(Retrier, ProgressResetsTheCount) {
  Retrier retrier(2, milliseconds(0), {});
  EXPECT_TRUE(retrier.wait_before_retry(kTransient, std::nullopt));
  retrier.note_progress();
  EXPECT_EQ(retrier.attempts_failed(), 0);
  EXPECT_TRUE(retrier.wait_before_retry(kTransient, std::nullopt));
  EXPECT_FALSE(retrier.wait_before_retry(kTransient, std::nullopt));
}

// A clock the test moves by hand, so that nothing here waits for the time limit.
struct ManualClock {
  std::chrono::steady_clock::time_point now{};
  Retrier::Clock function() {
    return [this] { return now; };
  }
};

TEST(Retrier, GivesUpWhenTheNextRetryWouldStartPastTheTimeLimit) {
  ManualClock clock;
  Retrier retrier(100, milliseconds(0), {}, std::chrono::seconds(10), clock.function());
  EXPECT_TRUE(retrier.wait_before_retry(kTransient, std::nullopt));
  clock.now += std::chrono::seconds(9);
  EXPECT_TRUE(retrier.wait_before_retry(kTransient, std::nullopt));
  EXPECT_FALSE(retrier.out_of_time());
  clock.now += std::chrono::seconds(2);
  EXPECT_FALSE(retrier.wait_before_retry(kTransient, std::nullopt));
  EXPECT_TRUE(retrier.out_of_time());
  EXPECT_EQ(retrier.attempts_failed(), 3);
}

TEST(Retrier, DoesNotStartAWaitThatWouldEndPastTheTimeLimit) {
  ManualClock clock;
  Retrier retrier(100, milliseconds(0), {}, std::chrono::seconds(10), clock.function());
  clock.now += std::chrono::seconds(5);
  // Retry-After 6 s would start the retry 11 s after the first attempt: give up now, not after the wait.
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(retrier.wait_before_retry(kTransient, std::chrono::seconds(6)));
  EXPECT_TRUE(retrier.out_of_time());
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
}

TEST(Retrier, ProgressRestartsTheClock) {
  ManualClock clock;
  Retrier retrier(100, milliseconds(0), {}, std::chrono::seconds(10), clock.function());
  clock.now += std::chrono::seconds(9);
  retrier.note_progress();
  clock.now += std::chrono::seconds(9);
  EXPECT_TRUE(retrier.wait_before_retry(kTransient, std::nullopt));
  clock.now += std::chrono::seconds(2);
  EXPECT_FALSE(retrier.wait_before_retry(kTransient, std::nullopt));
  EXPECT_TRUE(retrier.out_of_time());
}

TEST(Retrier, ZeroTimeLimitMeansOnlyAttemptsCount) {
  ManualClock clock;
  Retrier retrier(3, milliseconds(0), {}, std::chrono::seconds(0), clock.function());
  clock.now += std::chrono::hours(24 * 365);
  EXPECT_TRUE(retrier.wait_before_retry(kTransient, std::nullopt));
  EXPECT_TRUE(retrier.wait_before_retry(kTransient, std::nullopt));
  EXPECT_FALSE(retrier.wait_before_retry(kTransient, std::nullopt));
  EXPECT_FALSE(retrier.out_of_time());
}

TEST(Retrier, RunningOutOfAttemptsIsNotRunningOutOfTime) {
  ManualClock clock;
  Retrier retrier(1, milliseconds(0), {}, std::chrono::seconds(10), clock.function());
  EXPECT_FALSE(retrier.wait_before_retry(kTransient, std::nullopt));
  EXPECT_FALSE(retrier.out_of_time());
}

}  // namespace
}  // namespace hfget::http
