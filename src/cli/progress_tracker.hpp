// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hfget/progress.hpp"

namespace hfget::cli {

struct ActiveFile {
  std::string path;
  std::uint64_t size = 0;
  std::uint64_t done = 0;
};

/// Where a download stands, as every progress view renders it.
struct ProgressSnapshot {
  std::chrono::system_clock::time_point now;
  double elapsed_seconds = 0;
  bool planned = false;
  std::string commit;
  std::size_t files_total = 0;
  std::size_t files_done = 0;
  std::size_t shards_total = 0;
  std::size_t shards_done = 0;
  std::uint64_t bytes_total = 0;
  std::uint64_t bytes_done = 0;             // on disk, including what earlier runs left
  std::uint64_t bytes_this_run = 0;         // written in this run (received, or copied from files already here)
  std::uint64_t bytes_copied_this_run = 0;  // of those, copied from files already here (Xet chunk reuse)
  double rate_bytes_per_second = 0;         // over the last few seconds
  std::optional<double> eta_seconds;
  std::vector<ActiveFile> active;  // files in flight, largest first
  std::string last_error;
  std::size_t connections = 0;  // in use now; 0 until the fetch starts
};

/// The counters behind the views. Not thread-safe: ProgressReporter serialises access.
class ProgressTracker {
 public:
  void plan(const DownloadPlanSummary& plan);
  void file_started(const RemoteFile& file, std::uint64_t resumed_bytes);
  void bytes(const RemoteFile& file, std::uint64_t count);
  void bytes_copied(std::uint64_t count) { state_.bytes_copied_this_run += count; }
  void bytes_discarded(const RemoteFile& file, std::uint64_t count);
  void file_done(const RemoteFile& file);
  void file_failed(const RemoteFile& file, const std::string& message);
  void connections(std::size_t count) { state_.connections = count; }

  ProgressSnapshot snapshot(std::chrono::steady_clock::time_point now);

 private:
  struct Sample {
    std::chrono::steady_clock::time_point time;
    std::uint64_t bytes;
  };
  ProgressSnapshot state_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::map<std::string, ActiveFile> active_;
  std::deque<Sample> samples_;  // bytes_this_run over time, for the recent rate
};

}  // namespace hfget::cli
