// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "cli/progress_tracker.hpp"
#include "util/utc_timestamp.hpp"

namespace hfget::cli {

/// A discrete event, as the views print it.
struct ProgressEvent {
  enum class Kind { kWaiting, kPlan, kFileStarted, kFileDone, kRetry, kFileFailed, kConnections, kFilePath };
  Kind kind = Kind::kPlan;
  std::string path;
  std::uint64_t size = 0;
  std::uint64_t resumed_bytes = 0;
  int attempt = 0;
  double delay_seconds = 0;
  std::string message;
  std::optional<long> holder_pid;
  std::size_t connections = 0;  // kConnections: the new count (message: why)
  std::string transfer_path;    // kFilePath: "xet" or "bridge" (message: why)
};

/// How the run ended, for the last line, the last JSON event and the state file.
struct ProgressOutcome {
  int exit_code = 0;
  std::string state;  // "done", "failed", "interrupted"
  std::string error;  // the one-line error, if any
  std::string snapshot_path;
};

/// One way of showing progress. Called with the reporter's lock held, from worker threads and the ticker.
class ProgressView {
 public:
  virtual ~ProgressView() = default;
  /// How often tick() wants to run.
  virtual std::chrono::milliseconds period() const = 0;
  virtual void tick(const ProgressSnapshot& snapshot) = 0;
  virtual void event(const ProgressEvent& event, const ProgressSnapshot& snapshot) = 0;
  virtual void finish(const ProgressSnapshot& snapshot, const ProgressOutcome& outcome) = 0;
};

/// Writes one finished line somewhere (stderr with a timestamp, or a log file).
using LineWriter = std::function<void(const std::string& line)>;

/// A live block on a terminal: the whole download on one line, then one line per active file, redrawn in
/// place at most 4 times a second.
std::unique_ptr<ProgressView> make_terminal_view(std::FILE* terminal);
/// Plain lines for logs (nohup, pipes, --log-file): the status every `interval`, one line per finished file,
/// retry and failure. No carriage returns, no escape codes.
/// `report_outcome`: also write the final line (for the log file; on stderr the summary or the error line
/// that main prints says it once).
std::unique_ptr<ProgressView> make_log_line_view(LineWriter writer, std::chrono::seconds interval, bool report_outcome);
/// One JSON object per line (--progress json); fields in docs/cli.md.
std::unique_ptr<ProgressView> make_json_lines_view(std::FILE* out, std::chrono::seconds interval);

/// "23/64 shards  30/70 files  210.4 GiB / 547.0 GiB (38.5%)  612.0 MB/s  ETA 9m12s"
std::string status_line(const ProgressSnapshot& snapshot);
/// "in flight: model-00063-of-00064.safetensors 12%, … (+3 more)": the `named` files in flight with the most
/// left, i.e. those the download will wait for last; empty when none is in flight.
std::string in_flight_summary(const ProgressSnapshot& snapshot, std::size_t named);
/// "2026-11-29T14:02:10Z", the time every view and record writes (util/utc_timestamp.hpp).
using util::utc_timestamp;

}  // namespace hfget::cli
