// SPDX-License-Identifier: MIT
#include <fmt/format.h>

#include <ctime>

#include "cli/progress_views.hpp"
#include "util/byte_size.hpp"

namespace hfget::cli {

std::string utc_timestamp(std::chrono::system_clock::time_point time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

std::string status_line(const ProgressSnapshot& snapshot) {
  const double percent = snapshot.bytes_total > 0 ? 100.0 * static_cast<double>(snapshot.bytes_done) /
                                                        static_cast<double>(snapshot.bytes_total)
                                                  : 100.0;
  std::string shards;
  if (snapshot.shards_total > 0) shards = fmt::format("{}/{} shards  ", snapshot.shards_done, snapshot.shards_total);
  return fmt::format("{}{}/{} files  {} / {} ({:.1f}%)  {}  ETA {}", shards, snapshot.files_done, snapshot.files_total,
                     util::format_binary_bytes(snapshot.bytes_done), util::format_binary_bytes(snapshot.bytes_total),
                     percent, util::format_rate(snapshot.rate_bytes_per_second),
                     snapshot.eta_seconds ? util::format_duration(*snapshot.eta_seconds) : "?");
}

}  // namespace hfget::cli
