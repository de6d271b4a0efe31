// SPDX-License-Identifier: MIT
#include "util/utc_timestamp.hpp"

#include <gtest/gtest.h>

namespace hfget::util {
namespace {

TEST(UtcTimestamp, ParsesWhatItWrites) {
  const auto moment = std::chrono::system_clock::from_time_t(1'764'600'000);  // 2025-12-01T14:40:00Z
  EXPECT_EQ(utc_timestamp(moment), "2025-12-01T14:40:00Z");
  EXPECT_EQ(parse_utc_timestamp("2025-12-01T14:40:00Z"), moment);
  EXPECT_EQ(parse_utc_timestamp("2025-12-01T14:40:00"), std::nullopt) << "no zone";
  EXPECT_EQ(parse_utc_timestamp("2025-12-01T14:40:00Z trailing"), std::nullopt);
  EXPECT_EQ(parse_utc_timestamp(""), std::nullopt);
}

}  // namespace
}  // namespace hfget::util
