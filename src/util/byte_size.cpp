// SPDX-License-Identifier: MIT
#include "util/byte_size.hpp"

#include <array>
#include <cmath>
#include <fmt/format.h>

namespace hfget::util {
namespace {

std::string format_scaled(std::uint64_t bytes, double base, const std::array<const char*, 6>& units) {
  if (bytes < static_cast<std::uint64_t>(base)) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  // Compare after rounding to the one decimal printed, so 999,999 bytes reads "1.0 MB", not "1000.0 kB".
  while (std::round(value * 10) / 10 >= base && unit + 1 < units.size()) {
    value /= base;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, units[unit]);
}

}  // namespace

std::string format_decimal_bytes(std::uint64_t bytes) {
  return format_scaled(bytes, 1000.0, {"B", "kB", "MB", "GB", "TB", "PB"});
}

std::string format_binary_bytes(std::uint64_t bytes) {
  return format_scaled(bytes, 1024.0, {"B", "KiB", "MiB", "GiB", "TiB", "PiB"});
}

std::string format_bytes_both(std::uint64_t bytes) {
  if (bytes < 1000) return fmt::format("{} B", bytes);
  return fmt::format("{} ({})", format_decimal_bytes(bytes), format_binary_bytes(bytes));
}

std::string format_rate(double bytes_per_second) {
  if (!(bytes_per_second > 0)) return "0 B/s";
  return format_decimal_bytes(static_cast<std::uint64_t>(bytes_per_second)) + "/s";
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto total = static_cast<std::uint64_t>(std::llround(seconds));
  const std::uint64_t hours = total / 3600;
  const std::uint64_t minutes = (total % 3600) / 60;
  const std::uint64_t secs = total % 60;
  if (hours > 0) return fmt::format("{}h{:02}m", hours, minutes);
  if (minutes > 0) return fmt::format("{}m{:02}s", minutes, secs);
  return fmt::format("{}s", secs);
}

}  // namespace hfget::util
