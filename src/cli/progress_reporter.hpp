// SPDX-License-Identifier: MIT
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cli/progress_tracker.hpp"
#include "cli/progress_views.hpp"
#include "hfget/progress.hpp"

namespace hfget::cli {

/// The library's ProgressSink: keeps the counters and hands events and periodic snapshots to every view
/// (terminal, log lines, JSON lines, state file). A ticker thread drives the periodic output, so a stalled
/// transfer still shows up in the log.
class ProgressReporter final : public ProgressSink {
 public:
  explicit ProgressReporter(std::vector<std::unique_ptr<ProgressView>> views);
  ~ProgressReporter() override;
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  void on_waiting_for_target(std::optional<long> holder_pid) override;
  void on_plan(const DownloadPlanSummary& plan) override;
  void on_file_started(const RemoteFile& file, std::uint64_t resumed_bytes) override;
  void on_bytes(const RemoteFile& file, std::uint64_t bytes) override;
  void on_bytes_copied(const RemoteFile& file, std::uint64_t bytes) override;
  void on_bytes_discarded(const RemoteFile& file, std::uint64_t bytes) override;
  void on_retry(const RemoteFile& file, int attempt, std::string_view reason, std::chrono::milliseconds delay) override;
  void on_file_done(const RemoteFile& file) override;
  void on_file_failed(const RemoteFile& file, const Error& error) override;
  void on_connections(std::size_t count, std::string_view reason) override;
  void on_file_path(const RemoteFile& file, TransferPath path, std::string_view reason) override;

  /// Stops the ticker and gives every view the outcome. Call once, before printing anything else.
  void finish(const ProgressOutcome& outcome);

 private:
  void dispatch(const ProgressEvent& event);  // requires mutex_
  void tick_loop();

  std::vector<std::unique_ptr<ProgressView>> views_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool finished_ = false;
  ProgressTracker tracker_;
  std::thread ticker_;
};

}  // namespace hfget::cli
