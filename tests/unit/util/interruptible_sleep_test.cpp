// SPDX-License-Identifier: MIT
#include "util/interruptible_sleep.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <stop_token>

namespace hfget::util {
namespace {

TEST(SleepUnlessStopped, ReturnsTrueWhenNotStopped) {
  EXPECT_TRUE(sleep_unless_stopped(std::chrono::milliseconds(0), {}));
}

// A fired token ends the wait at once and says so, so a lock wait or a backoff never outlives Ctrl-C.
TEST(SleepUnlessStopped, ReturnsFalseAtOnceWhenStopped) {
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(sleep_unless_stopped(std::chrono::hours(1), stop.get_token()));
}

}  // namespace
}  // namespace hfget::util
