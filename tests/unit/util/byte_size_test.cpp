// SPDX-License-Identifier: MIT
#include "util/byte_size.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace hfget::util {

TEST(FormatDecimalBytes, CountsInPowersOfOneThousand) {
  EXPECT_EQ(format_decimal_bytes(0), "0 B");
  EXPECT_EQ(format_decimal_bytes(999), "999 B");
  EXPECT_EQ(format_decimal_bytes(1000), "1.0 kB");
  EXPECT_EQ(format_decimal_bytes(1'500'000), "1.5 MB");
  EXPECT_EQ(format_decimal_bytes(595'000'000'000), "595.0 GB");
  EXPECT_EQ(format_decimal_bytes(2'000'000'000'000'000), "2.0 PB");
}

TEST(FormatDecimalBytes, RoundsUpIntoTheNextUnit) {
  EXPECT_EQ(format_decimal_bytes(999'999), "1.0 MB");
  EXPECT_EQ(format_binary_bytes(1024 * 1024 - 1), "1.0 MiB");
}

TEST(FormatBinaryBytes, CountsInPowersOf1024) {
  EXPECT_EQ(format_binary_bytes(1023), "1023 B");
  EXPECT_EQ(format_binary_bytes(1024), "1.0 KiB");
  EXPECT_EQ(format_binary_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_binary_bytes(595'000'000'000), "554.1 GiB");
}

TEST(FormatBinaryBytes, StopsAtTheLargestUnit) {
  EXPECT_EQ(format_binary_bytes(std::numeric_limits<std::uint64_t>::max()), "16384.0 PiB");
}

TEST(FormatBytesBoth, ShowsTheHubFigureAndTheDuFigure) {
  EXPECT_EQ(format_bytes_both(595'000'000'000), "595.0 GB (554.1 GiB)");
  EXPECT_EQ(format_bytes_both(12), "12 B");
}

TEST(FormatRate, IsDecimalBytesPerSecond) {
  EXPECT_EQ(format_rate(612'300'000.0), "612.3 MB/s");
  EXPECT_EQ(format_rate(0.0), "0 B/s");
  EXPECT_EQ(format_rate(-5.0), "0 B/s");
  EXPECT_EQ(format_rate(std::numeric_limits<double>::quiet_NaN()), "0 B/s");
}

TEST(FormatDuration, UsesTheTwoLargestUnits) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(45), "45s");
  EXPECT_EQ(format_duration(59.6), "1m00s");
  EXPECT_EQ(format_duration(552), "9m12s");
  EXPECT_EQ(format_duration(3720), "1h02m");
  EXPECT_EQ(format_duration(90'000), "25h00m");
}

TEST(FormatDuration, IsUnknownForNegativeOrNonFiniteInput) {
  EXPECT_EQ(format_duration(-1), "?");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "?");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::quiet_NaN()), "?");
}

}  // namespace hfget::util
