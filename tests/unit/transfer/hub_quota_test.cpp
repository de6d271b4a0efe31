// SPDX-License-Identifier: MIT
#include "transfer/hub_quota.hpp"

#include <gtest/gtest.h>

#include <stop_token>

namespace hfget::transfer {
namespace {

TEST(HubQuota, IsAvailableUntilAResetIsRecorded) {
  const HubQuota quota;
  EXPECT_TRUE(quota.wait_until_available({}));
}

TEST(HubQuota, AResetInThePastHoldsNothing) {
  HubQuota quota;
  quota.used_up_for(std::chrono::milliseconds(0));
  EXPECT_TRUE(quota.wait_until_available({}));
}

TEST(HubQuota, AStopEndsTheWaitForAUsedUpQuota) {
  HubQuota quota;
  quota.used_up_for(std::chrono::hours(1));
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(quota.wait_until_available(stop.get_token())) << "held until the reset, unless stopped";
}

}  // namespace
}  // namespace hfget::transfer
