// SPDX-License-Identifier: MIT
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "cli/progress_views.hpp"
#include "util/byte_size.hpp"

namespace hfget::cli {

std::string status_line(const ProgressSnapshot& snapshot) {
  const double percent = snapshot.bytes_total > 0 ? 100.0 * static_cast<double>(snapshot.bytes_done) /
                                                        static_cast<double>(snapshot.bytes_total)
                                                  : 100.0;
  std::string shards;
  if (snapshot.shards_total > 0) shards = fmt::format("{}/{} shards  ", snapshot.shards_done, snapshot.shards_total);
  const std::string copied = snapshot.bytes_copied_this_run > 0
                                 ? fmt::format("  {} copied", util::format_binary_bytes(snapshot.bytes_copied_this_run))
                                 : "";
  const std::string connections =
      snapshot.connections > 0 ? fmt::format("  {} conn{}", snapshot.connections, snapshot.connections == 1 ? "" : "s")
                               : "";
  return fmt::format("{}{}/{} files  {} / {} ({:.1f}%)  {}{}{}  ETA {}", shards, snapshot.files_done,
                     snapshot.files_total, util::format_binary_bytes(snapshot.bytes_done),
                     util::format_binary_bytes(snapshot.bytes_total), percent,
                     util::format_rate(snapshot.rate_bytes_per_second), copied, connections,
                     snapshot.eta_seconds ? util::format_duration(*snapshot.eta_seconds) : "?");
}

std::string in_flight_summary(const ProgressSnapshot& snapshot, std::size_t named) {
  if (snapshot.active.empty() || named == 0) return "";
  std::vector<const ActiveFile*> files;
  for (const ActiveFile& file : snapshot.active) files.push_back(&file);
  const auto left = [](const ActiveFile* file) { return file->size - std::min(file->done, file->size); };
  std::stable_sort(files.begin(), files.end(),
                   [&](const ActiveFile* a, const ActiveFile* b) { return left(a) > left(b); });
  std::string summary = "in flight: ";
  for (std::size_t i = 0; i < files.size() && i < named; ++i) {
    const ActiveFile& file = *files[i];
    // Rounded down: a file shown at 100% would be done.
    const std::uint64_t percent = file.size > 0 ? std::min(file.done, file.size) * 100 / file.size : 0;
    summary += fmt::format("{}{} {}%", i > 0 ? ", " : "", file.path, percent);
  }
  if (files.size() > named) summary += fmt::format(" (+{} more)", files.size() - named);
  return summary;
}

}  // namespace hfget::cli
