// SPDX-License-Identifier: MIT
// What the periodic log line says about the files in flight.
#include <gtest/gtest.h>

#include "cli/progress_views.hpp"

namespace hfget::cli {
namespace {

TEST(InFlightSummary, NamesTheFilesWithTheMostLeftFirst) {
  ProgressSnapshot snapshot;
  snapshot.active = {{"a.safetensors", 1000, 900}, {"b.safetensors", 1000, 100}, {"c.safetensors", 4000, 3000}};
  EXPECT_EQ(in_flight_summary(snapshot, 2), "in flight: c.safetensors 75%, b.safetensors 10% (+1 more)");
  EXPECT_EQ(in_flight_summary(snapshot, 3), "in flight: c.safetensors 75%, b.safetensors 10%, a.safetensors 90%");
}

TEST(InFlightSummary, NeverShowsAnUnfinishedFileAtAHundredPercent) {
  ProgressSnapshot snapshot;
  snapshot.active = {{"big.safetensors", 1000, 999}, {"empty.txt", 0, 0}};
  EXPECT_EQ(in_flight_summary(snapshot, 2), "in flight: big.safetensors 99%, empty.txt 0%");
}

TEST(InFlightSummary, IsEmptyWhenNothingIsInFlight) {
  EXPECT_EQ(in_flight_summary(ProgressSnapshot{}, 2), "");
}

}  // namespace
}  // namespace hfget::cli
