// SPDX-License-Identifier: MIT
#include <fmt/format.h>

#include "cli/progress_views.hpp"
#include "util/byte_size.hpp"

namespace hfget::cli {
namespace {

constexpr std::size_t kNamedInFlight = 2;

class LogLineView final : public ProgressView {
 public:
  LogLineView(LineWriter writer, std::chrono::seconds interval, bool report_outcome)
      : writer_(std::move(writer)), interval_(interval), report_outcome_(report_outcome) {}

  std::chrono::milliseconds period() const override { return interval_; }

  // The periodic line also names the files the download will wait for last: in a log, the first thing to
  // look at when the end seems to drag.
  void tick(const ProgressSnapshot& snapshot) override {
    if (!snapshot.planned) return;
    const std::string in_flight = in_flight_summary(snapshot, kNamedInFlight);
    writer_(in_flight.empty() ? status_line(snapshot) : fmt::format("{}  {}", status_line(snapshot), in_flight));
  }

  void event(const ProgressEvent& event, const ProgressSnapshot& snapshot) override {
    switch (event.kind) {
      case ProgressEvent::Kind::kWaiting:
        writer_(fmt::format("another hfget{} is downloading into this target; waiting for it to finish",
                            event.holder_pid ? fmt::format(" (PID {})", *event.holder_pid) : ""));
        break;
      case ProgressEvent::Kind::kPlan:
        writer_(fmt::format("commit {}: {} files ({} shards), {}; {} still to fetch", snapshot.commit,
                            snapshot.files_total, snapshot.shards_total, util::format_bytes_both(snapshot.bytes_total),
                            util::format_bytes_both(snapshot.bytes_total - snapshot.bytes_done)));
        break;
      case ProgressEvent::Kind::kFileStarted:
        if (event.resumed_bytes > 0) {
          writer_(fmt::format("{}: resuming at {} of {}", event.path, util::format_binary_bytes(event.resumed_bytes),
                              util::format_binary_bytes(event.size)));
        }
        break;
      case ProgressEvent::Kind::kFileDone:
        writer_(
            fmt::format("done {} ({}); {}", event.path, util::format_binary_bytes(event.size), status_line(snapshot)));
        break;
      case ProgressEvent::Kind::kRetry:
        writer_(
            fmt::format("{}: {}; retry {} in {:.1f}s", event.path, event.message, event.attempt, event.delay_seconds));
        break;
      case ProgressEvent::Kind::kFileFailed: writer_(fmt::format("FAILED {}", event.message)); break;
      case ProgressEvent::Kind::kConnections: break;  // the status lines carry the count; -v logs each change
      case ProgressEvent::Kind::kFilePath:
        // Only a change of path is news in a log; the closing line counts the bytes per path.
        if (event.message.rfind("fell back", 0) == 0) writer_(fmt::format("{}: {}", event.path, event.message));
        break;
    }
  }

  void finish(const ProgressSnapshot& snapshot, const ProgressOutcome& outcome) override {
    if (!report_outcome_) return;
    if (outcome.state == "done") {
      writer_(fmt::format("finished: {} in {:.1f}s", status_line(snapshot), snapshot.elapsed_seconds));
    } else {
      writer_(fmt::format("{} (exit code {}): {}", outcome.state, outcome.exit_code, outcome.error));
    }
  }

 private:
  LineWriter writer_;
  std::chrono::seconds interval_;
  bool report_outcome_;
};

}  // namespace

std::unique_ptr<ProgressView> make_log_line_view(LineWriter writer, std::chrono::seconds interval,
                                                 bool report_outcome) {
  return std::make_unique<LogLineView>(std::move(writer), interval, report_outcome);
}

}  // namespace hfget::cli
