// SPDX-License-Identifier: MIT
// --progress json: one object per line on stderr, each with "event" and "time". Field names are part of the
// interface (docs/cli.md); add fields, never rename them.
#include <nlohmann/json.hpp>

#include "cli/progress_views.hpp"

namespace hfget::cli {
namespace {

nlohmann::json counters(const ProgressSnapshot& snapshot) {
  return {{"files_done", snapshot.files_done},
          {"files_total", snapshot.files_total},
          {"shards_done", snapshot.shards_done},
          {"shards_total", snapshot.shards_total},
          {"bytes_done", snapshot.bytes_done},
          {"bytes_total", snapshot.bytes_total},
          {"bytes_this_run", snapshot.bytes_this_run},
          {"bytes_copied_this_run", snapshot.bytes_copied_this_run},
          {"rate_bytes_per_second", snapshot.rate_bytes_per_second},
          {"eta_seconds", snapshot.eta_seconds ? nlohmann::json(*snapshot.eta_seconds) : nlohmann::json(nullptr)}};
}

class JsonLinesView final : public ProgressView {
 public:
  JsonLinesView(std::FILE* out, std::chrono::seconds interval) : out_(out), interval_(interval) {}

  std::chrono::milliseconds period() const override { return interval_; }

  void tick(const ProgressSnapshot& snapshot) override {
    if (!snapshot.planned) return;
    nlohmann::json line = counters(snapshot);
    emit("progress", line, snapshot);
  }

  void event(const ProgressEvent& event, const ProgressSnapshot& snapshot) override {
    nlohmann::json line;
    switch (event.kind) {
      case ProgressEvent::Kind::kWaiting:
        line = {{"holder_pid", event.holder_pid ? nlohmann::json(*event.holder_pid) : nlohmann::json(nullptr)}};
        emit("waiting", line, snapshot);
        return;
      case ProgressEvent::Kind::kPlan:
        line = counters(snapshot);
        line["commit"] = snapshot.commit;
        emit("start", line, snapshot);
        return;
      case ProgressEvent::Kind::kFileStarted:
        line = {{"path", event.path}, {"size", event.size}, {"resumed_bytes", event.resumed_bytes}};
        emit("file_started", line, snapshot);
        return;
      case ProgressEvent::Kind::kFileDone:
        line = counters(snapshot);
        line["path"] = event.path;
        line["size"] = event.size;
        emit("file_done", line, snapshot);
        return;
      case ProgressEvent::Kind::kRetry:
        line = {{"path", event.path},
                {"attempt", event.attempt},
                {"reason", event.message},
                {"delay_seconds", event.delay_seconds}};
        emit("retry", line, snapshot);
        return;
      case ProgressEvent::Kind::kFileFailed:
        line = {{"path", event.path}, {"message", event.message}};
        emit("error", line, snapshot);
        return;
      case ProgressEvent::Kind::kConnections:
        line = {{"count", event.connections}, {"reason", event.message}};
        emit("connections", line, snapshot);
        return;
      case ProgressEvent::Kind::kFilePath:
        line = {{"path", event.path}, {"via", event.transfer_path}, {"reason", event.message}};
        emit("file_path", line, snapshot);
        return;
    }
  }

  void finish(const ProgressSnapshot& snapshot, const ProgressOutcome& outcome) override {
    nlohmann::json line = counters(snapshot);
    line["state"] = outcome.state;
    line["exit_code"] = outcome.exit_code;
    line["elapsed_seconds"] = snapshot.elapsed_seconds;
    if (!outcome.error.empty()) line["error"] = outcome.error;
    if (!outcome.snapshot_path.empty()) line["path"] = outcome.snapshot_path;
    emit("done", line, snapshot);
  }

 private:
  void emit(const char* name, nlohmann::json& line, const ProgressSnapshot& snapshot) {
    line["event"] = name;
    line["time"] = utc_timestamp(
        snapshot.now == std::chrono::system_clock::time_point{} ? std::chrono::system_clock::now() : snapshot.now);
    std::fputs((line.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace) + "\n").c_str(),
               out_);
    std::fflush(out_);
  }

  std::FILE* out_;
  std::chrono::seconds interval_;
};

}  // namespace

std::unique_ptr<ProgressView> make_json_lines_view(std::FILE* out, std::chrono::seconds interval) {
  return std::make_unique<JsonLinesView>(out, interval);
}

}  // namespace hfget::cli
