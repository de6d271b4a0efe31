// SPDX-License-Identifier: MIT
#include "util/byte_size.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cmath>
#include <string>
#include <utility>

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

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.')) ++digits;
  if (digits == 0) return std::nullopt;
  double value = 0;
  try {
    value = std::stod(std::string(text.substr(0, digits)));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::string unit(text.substr(digits));
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::array<std::pair<std::string_view, double>, 13> kUnits{{
      {"", 1.0},
      {"b", 1.0},
      {"k", 1024.0},
      {"kb", 1e3},
      {"kib", 1024.0},
      {"m", 1048576.0},
      {"mb", 1e6},
      {"mib", 1048576.0},
      {"g", 1073741824.0},
      {"gb", 1e9},
      {"gib", 1073741824.0},
      {"t", 1099511627776.0},
      {"tib", 1099511627776.0},
  }};
  for (const auto& [name, scale] : kUnits) {
    if (unit == name) {
      const double bytes = value * scale;
      if (!(bytes >= 0) || bytes > 1e18) return std::nullopt;
      return static_cast<std::uint64_t>(bytes);
    }
  }
  return std::nullopt;
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
