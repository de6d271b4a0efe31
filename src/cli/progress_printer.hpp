// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "hfget/progress.hpp"

namespace hfget::cli {

enum class ProgressStyle {
  kTerminal,  // one status line redrawn in place, at most 4 times a second
  kLogLines,  // plain timestamped lines every interval and one per finished file: for nohup and log files
  kSilent,    // --quiet: errors only
};

/// Renders download events on stderr. The library calls it from worker threads; a ticker thread prints the
/// periodic lines, so a stalled transfer still shows up in the log.
class ProgressPrinter final : public ProgressSink {
 public:
  ProgressPrinter(ProgressStyle style, std::chrono::seconds log_interval, std::FILE* out = stderr);
  ~ProgressPrinter() override;
  ProgressPrinter(const ProgressPrinter&) = delete;
  ProgressPrinter& operator=(const ProgressPrinter&) = delete;

  void on_plan(const DownloadPlanSummary& plan) override;
  void on_file_started(const RemoteFile& file, std::uint64_t resumed_bytes) override;
  void on_bytes(const RemoteFile& file, std::uint64_t bytes) override;
  void on_bytes_discarded(const RemoteFile& file, std::uint64_t bytes) override;
  void on_retry(const RemoteFile& file, int attempt, std::string_view reason, std::chrono::milliseconds delay) override;
  void on_file_done(const RemoteFile& file) override;
  void on_file_failed(const RemoteFile& file, const Error& error) override;

  /// Stops the ticker and ends the status line; call before printing the summary.
  void finish();
  /// A line for people (stderr), placed correctly around the terminal status line.
  void print_line(const std::string& line);

 private:
  std::string status_text(std::chrono::steady_clock::time_point now) const;  // requires mutex_
  void write_line(const std::string& line);                                  // requires mutex_
  void tick();

  ProgressStyle style_;
  std::chrono::seconds log_interval_;
  std::FILE* out_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool finished_ = false;
  bool planned_ = false;
  bool status_shown_ = false;
  std::size_t files_total_ = 0;
  std::size_t files_done_ = 0;
  std::uint64_t bytes_total_ = 0;
  std::uint64_t bytes_done_ = 0;        // on disk, including what earlier runs left
  std::uint64_t bytes_this_run_ = 0;    // received over the network now
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::map<std::string, std::uint64_t> active_;  // path → bytes done, for files in flight
  std::thread ticker_;
};

/// "2026-11-29T14:02:10Z": UTC, so lines from servers in different zones compare.
std::string utc_timestamp();

}  // namespace hfget::cli
