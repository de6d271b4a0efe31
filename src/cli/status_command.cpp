// SPDX-License-Identifier: MIT
// status and wait only show what the library observes of a run (hfget/run_observation.hpp): state.json,
// written by the download holding the target lock, and detached.json, the PID a --detach launch started, judged
// against the processes alive now. A run whose process is gone reads as died: status says so, and wait returns
// instead of waiting forever.
#include "cli/status_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/exit_code.hpp"
#include "cli/hub_options.hpp"
#include "cli/progress_views.hpp"
#include "cli/stderr_progress.hpp"
#include "cli/target.hpp"
#include "hfget/error.hpp"
#include "hfget/run_observation.hpp"
#include "util/byte_size.hpp"
#include "util/interruptible_sleep.hpp"

namespace hfget::cli {
namespace {

constexpr int kExitNoDownload = 3;
constexpr std::size_t kNamedInFlightInStatus = 10;
constexpr std::size_t kNamedInFlightInWait = 2;
constexpr auto kWaitPoll = std::chrono::milliseconds(500);

struct TargetFlags {
  std::string target;
  std::string repo_type = "model";
  std::string cache_dir;
  bool json = false;
  bool quiet = false;
  double timeout_seconds = 0;
  int progress_interval_seconds = 10;  // as download's log lines
};

const char* phase_name(RunPhase phase) {
  switch (phase) {
    case RunPhase::kNone: return "none";
    case RunPhase::kStarting: return "starting";
    case RunPhase::kRunning: return "running";
    case RunPhase::kDied: return "died";
    case RunPhase::kEnded: return "ended";
  }
  return "none";
}

// The record's counters as the download's own views hold them, so that status and wait print its lines.
ProgressSnapshot snapshot_of(const RunRecord& record) {
  ProgressSnapshot snapshot;
  snapshot.planned = true;
  snapshot.files_done = record.files_done;
  snapshot.files_total = record.files_total;
  snapshot.shards_done = record.shards_done;
  snapshot.shards_total = record.shards_total;
  snapshot.bytes_done = record.bytes_done;
  snapshot.bytes_total = record.bytes_total;
  snapshot.rate_bytes_per_second = record.rate_bytes_per_second;
  snapshot.eta_seconds = record.eta_seconds;
  for (const RunRecordFile& file : record.in_flight) snapshot.active.push_back({file.path, file.size, file.bytes_done});
  return snapshot;
}

// "  in flight: a 12%, b 40% (+3 more)": the record names the files with the most left and counts the others.
std::string in_flight_line(const RunRecord& record) {
  const ProgressSnapshot snapshot = snapshot_of(record);
  if (snapshot.active.empty()) return "";
  const std::size_t named = snapshot.active.size();
  return fmt::format("  {}{}\n", in_flight_summary(snapshot, kNamedInFlightInStatus),
                     record.files_in_flight > named && named <= kNamedInFlightInStatus
                         ? fmt::format(" (+{} more)", record.files_in_flight - named)
                         : "");
}

// "  3/8 shards, 5/12 files, 1.2 GB / 4.0 GB", and the rate and ETA while it runs.
std::string progress_line(const RunRecord& record, bool running) {
  std::string out = fmt::format("  {}/{} shards, {}/{} files, {} / {}", record.shards_done, record.shards_total,
                                record.files_done, record.files_total, util::format_bytes_both(record.bytes_done),
                                util::format_bytes_both(record.bytes_total));
  if (running) {
    out += fmt::format(", {}, ETA {}", util::format_rate(record.rate_bytes_per_second),
                       record.eta_seconds ? util::format_duration(*record.eta_seconds) : "?");
  }
  return out + "\n";
}

std::string describe_record(const RunObservation& seen, const RunRecord& record, const std::string& log_line) {
  const bool running = seen.phase == RunPhase::kRunning;
  const std::string state =
      seen.phase == RunPhase::kDied ? "died (killed or crashed; run the download again to resume)" : record.state;
  std::string out = fmt::format("{}: {} @ {}\n", state, record.repo, record.commit);
  out += fmt::format("  pid {}, started {}, updated {}\n", record.pid, record.started_at, record.updated_at);
  out += progress_line(record, running);
  if (running) out += in_flight_line(record);
  if (record.exit_code) out += fmt::format("  exit code {}\n", *record.exit_code);
  if (!record.last_error.empty()) out += fmt::format("  last error: {}\n", record.last_error);
  return out + log_line;
}

std::string describe(const RunObservation& seen) {
  if (seen.phase == RunPhase::kNone) return "no hfget download has run into this target";
  const std::string log_line = seen.log.empty() ? "" : fmt::format("  log: {}\n", seen.log);
  if (seen.phase == RunPhase::kStarting) {
    return fmt::format("starting (PID {}; queued behind another download or listing the repo)\n{}", *seen.detached_pid,
                       log_line);
  }
  if (!seen.record) {
    return fmt::format("died: PID {} was launched but never reported (see its log)\n{}", *seen.detached_pid, log_line);
  }
  return describe_record(seen, *seen.record, log_line);
}

std::string as_json(const RunObservation& seen) {
  // Every field as written; the record was checked to be a JSON object of bounded depth when it was read.
  nlohmann::json out = seen.record ? nlohmann::json::parse(seen.record->as_written, nullptr, false) : nullptr;
  if (!out.is_object()) out = nlohmann::json::object();
  out["phase"] = phase_name(seen.phase);
  out["alive"] = seen.phase == RunPhase::kRunning || seen.phase == RunPhase::kStarting;
  if (seen.phase == RunPhase::kDied) out["state"] = "died";
  if (seen.detached_pid) out["detached_pid"] = *seen.detached_pid;
  if (!seen.log.empty()) out["log"] = seen.log;
  return out.dump(2, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace) + "\n";
}

std::filesystem::path state_dir_from(const TargetFlags& flags) {
  return state_dir_of(
      resolve_target(flags.target, flags.repo_type, flags.cache_dir, HubEnvironment::from_process_environment()));
}

int run_status(const TargetFlags& flags) {
  const RunObservation seen = observe_run(state_dir_from(flags));
  if (flags.json) {
    std::fputs(as_json(seen).c_str(), stdout);
  } else {
    std::fputs((describe(seen) + (describe(seen).ends_with('\n') ? "" : "\n")).c_str(), stdout);
  }
  return seen.phase == RunPhase::kNone ? kExitNoDownload : kExitSuccess;
}

// wait's progress while the download runs (cli/stderr_progress.hpp): the download's status line, as its
// state record has it.
std::string wait_line(const RunRecord& record) {
  const ProgressSnapshot snapshot = snapshot_of(record);
  const std::string in_flight = in_flight_summary(snapshot, kNamedInFlightInWait);
  return fmt::format("waiting for PID {}: {}{}{}", record.pid, status_line(snapshot), in_flight.empty() ? "" : "  ",
                     in_flight);
}

int run_wait(const TargetFlags& flags, const RunContext& context) {
  const std::filesystem::path state_dir = state_dir_from(flags);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(flags.timeout_seconds);
  StderrProgress progress(flags.quiet, std::chrono::seconds(flags.progress_interval_seconds));
  while (true) {
    const RunObservation seen = observe_run(state_dir);
    switch (seen.phase) {
      case RunPhase::kNone:
        progress.clear();
        std::fputs("hfget: no hfget download has run into this target\n", stderr);
        return kExitNoDownload;
      case RunPhase::kDied:
        progress.clear();
        std::fputs(("hfget: " + describe(seen)).c_str(), stderr);
        return exit_code_for(ErrorCode::kInternal);
      case RunPhase::kEnded:
        progress.clear();
        if (!flags.quiet) std::fputs(describe(seen).c_str(), stderr);
        return seen.record->exit_code.value_or(seen.record->state == "done" ? 0 : 1);
      case RunPhase::kStarting:
      case RunPhase::kRunning: break;
    }
    if (seen.phase == RunPhase::kRunning && seen.record) progress.show(wait_line(*seen.record));
    if (flags.timeout_seconds > 0 && std::chrono::steady_clock::now() >= deadline) {
      progress.clear();
      std::fputs("hfget: timed out waiting; the download goes on\n", stderr);
      return kExitWaitTimedOut;
    }
    if (!util::sleep_unless_stopped(kWaitPoll, context.stop)) {
      progress.clear();
      return context.interrupted_exit_code();
    }
  }
}

CLI::App* add_target_options(CLI::App* command, TargetFlags& flags) {
  command->add_option("target", flags.target, "A --local-dir download, or a repo id in the HF cache")->required();
  add_repo_type_option(command, flags.repo_type);
  command->add_option("--cache-dir", flags.cache_dir, "HF cache directory (default: HF_HUB_CACHE)");
  return command;
}

}  // namespace

std::function<int(const RunContext&)> add_status_command(CLI::App& status) {
  auto flags = std::make_shared<TargetFlags>();
  CLI::App* command = add_target_options(&status, *flags);
  command->add_flag("--json", flags->json, "Print the state as JSON");
  return [command, flags](const RunContext&) -> int { return command->parsed() ? run_status(*flags) : -1; };
}

std::function<int(const RunContext&)> add_wait_command(CLI::App& wait) {
  auto flags = std::make_shared<TargetFlags>();
  CLI::App* command = add_target_options(&wait, *flags);
  command->add_option("--timeout", flags->timeout_seconds, "Give up after this many seconds (exit 124); 0 = never")
      ->check(CLI::NonNegativeNumber);
  command->add_flag("-q,--quiet", flags->quiet, "No progress and no summary; errors only on stderr");
  command
      ->add_option("--progress-interval", flags->progress_interval_seconds,
                   "Seconds between progress lines when stderr is not a terminal")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  return
      [command, flags](const RunContext& context) -> int { return command->parsed() ? run_wait(*flags, context) : -1; };
}

}  // namespace hfget::cli
