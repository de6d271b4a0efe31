// SPDX-License-Identifier: MIT
#include "util/utc_timestamp.hpp"

#include <ctime>

namespace hfget::util {

std::string utc_timestamp(std::chrono::system_clock::time_point time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

std::optional<std::chrono::system_clock::time_point> parse_utc_timestamp(const std::string& text) {
  std::tm utc{};
  const char* end = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  if (end == nullptr || *end != '\0') return std::nullopt;
  const std::time_t seconds = ::timegm(&utc);
  if (seconds == static_cast<std::time_t>(-1)) return std::nullopt;
  return std::chrono::system_clock::from_time_t(seconds);
}

}  // namespace hfget::util
