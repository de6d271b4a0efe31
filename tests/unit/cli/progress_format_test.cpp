// SPDX-License-Identifier: MIT
// What the periodic log line says: the status, and the files in flight.
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

TEST(StatusLine, SaysHowManyBytesWereCopiedOnlyWhenSomeWere) {
  ProgressSnapshot snapshot;
  snapshot.files_total = 2;
  snapshot.bytes_total = 4 << 20;
  snapshot.bytes_done = 2 << 20;
  snapshot.connections = 8;
  EXPECT_EQ(status_line(snapshot).find("copied"), std::string::npos);
  snapshot.bytes_copied_this_run = 3 << 19;
  const std::string line = status_line(snapshot);
  EXPECT_NE(line.find("  1.5 MiB copied  8 conns  ETA"), std::string::npos) << line;
}

}  // namespace
}  // namespace hfget::cli
