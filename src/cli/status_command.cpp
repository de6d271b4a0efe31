// SPDX-License-Identifier: MIT
// status and wait read <state dir>/state.json (written by the download holding the target lock) and
// detached.json (the PID a --detach launch started). A state that says "running" whose PID is gone means the
// download was killed or crashed: status says so, and wait returns instead of waiting forever.
#include "cli/status_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "cli/exit_code.hpp"
#include "cli/hub_options.hpp"
#include "cli/progress_views.hpp"
#include "cli/state_file.hpp"
#include "cli/stderr_progress.hpp"
#include "cli/target.hpp"
#include "hfget/error.hpp"
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

enum class Phase { kNone, kStarting, kRunning, kDied, kEnded };

struct Observation {
  Phase phase = Phase::kNone;
  std::optional<DownloadState> state;
  std::optional<long> detached_pid;
  std::string log;  // where the download's lines go, when it has a log file
};

// What the files say, judged against the processes that exist now.
Observation observe(const std::filesystem::path& state_dir) {
  Observation seen;
  seen.state = read_state_file(state_file_path(state_dir));
  const std::optional<DetachedLaunch> launch = read_detached_launch(state_dir);
  if (launch) seen.detached_pid = launch->pid;
  // The state's own log (--log-file), else the detached launch's, when that launch is the state's run or has
  // not reported yet.
  if (seen.state && seen.state->fields.contains("log_file") && seen.state->fields["log_file"].is_string()) {
    seen.log = seen.state->fields["log_file"].get<std::string>();
  } else if (launch && (!seen.state || seen.state->pid == launch->pid)) {
    seen.log = launch->log;
  }
  const bool detached_alive = launch && process_alive(launch->pid, launch->started_at);
  if (seen.state && seen.state->state == "running") {
    seen.phase = process_alive(seen.state->pid, seen.state->started_at) ? Phase::kRunning : Phase::kDied;
    if (seen.phase == Phase::kDied && detached_alive && *seen.detached_pid != seen.state->pid)
      seen.phase = Phase::kStarting;
    return seen;
  }
  // A detached launch that has not taken over the state file yet (starting, or queued behind another run).
  if (detached_alive && (!seen.state || seen.state->pid != *seen.detached_pid)) {
    seen.phase = Phase::kStarting;
    return seen;
  }
  if (seen.state) {
    seen.phase = Phase::kEnded;
  } else if (seen.detached_pid) {
    seen.phase = Phase::kDied;  // launched, gone, and never wrote a state
  }
  return seen;
}

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kNone: return "none";
    case Phase::kStarting: return "starting";
    case Phase::kRunning: return "running";
    case Phase::kDied: return "died";
    case Phase::kEnded: return "ended";
  }
  return "none";
}

std::uint64_t count_in(const nlohmann::json& object, const char* key) {
  return object.contains(key) && object[key].is_number_unsigned() ? object[key].get<std::uint64_t>() : 0;
}

// The record's counters as the download's own views hold them, so that status and wait print its lines.
ProgressSnapshot snapshot_of(const nlohmann::json& f) {
  const auto count = [&](const char* key) { return count_in(f, key); };
  ProgressSnapshot snapshot;
  snapshot.planned = true;
  snapshot.files_done = count("files_done");
  snapshot.files_total = count("files_total");
  snapshot.shards_done = count("shards_done");
  snapshot.shards_total = count("shards_total");
  snapshot.bytes_done = count("bytes_done");
  snapshot.bytes_total = count("bytes_total");
  if (f.contains("rate_bytes_per_second") && f["rate_bytes_per_second"].is_number())
    snapshot.rate_bytes_per_second = f["rate_bytes_per_second"].get<double>();
  if (f.contains("eta_seconds") && f["eta_seconds"].is_number()) snapshot.eta_seconds = f["eta_seconds"].get<double>();
  if (f.contains("in_flight") && f["in_flight"].is_array()) {
    for (const nlohmann::json& file : f["in_flight"]) {
      if (!file.is_object() || !file.contains("path") || !file["path"].is_string()) continue;
      snapshot.active.push_back(
          {file["path"].get<std::string>(), count_in(file, "size"), count_in(file, "bytes_done")});
    }
  }
  return snapshot;
}

std::string describe(const Observation& seen) {
  if (seen.phase == Phase::kNone) return "no hfget download has run into this target";
  const std::string log_line = seen.log.empty() ? "" : fmt::format("  log: {}\n", seen.log);
  if (seen.phase == Phase::kStarting) {
    return fmt::format("starting (PID {}; queued behind another download or listing the repo)\n{}", *seen.detached_pid,
                       log_line);
  }
  const nlohmann::json& f = seen.state ? seen.state->fields : nlohmann::json::object();
  const auto number = [&](const char* key) {
    return f.contains(key) && f[key].is_number() ? f[key].get<double>() : 0.0;
  };
  const auto text = [&](const char* key) {
    return f.contains(key) && f[key].is_string() ? f[key].get<std::string>() : "";
  };
  std::string state = seen.phase == Phase::kDied ? "died (killed or crashed; run the download again to resume)"
                      : seen.state               ? seen.state->state
                                                 : "unknown";
  if (seen.phase == Phase::kDied && !seen.state) {
    return fmt::format("died: PID {} was launched but never reported (see its log)\n{}", *seen.detached_pid, log_line);
  }
  std::string out = fmt::format("{}: {} @ {}\n", state, text("repo"), text("commit"));
  out += fmt::format("  pid {}, started {}, updated {}\n", seen.state->pid, text("started_at"), text("updated_at"));
  out += fmt::format("  {}/{} shards, {}/{} files, {} / {}", static_cast<long>(number("shards_done")),
                     static_cast<long>(number("shards_total")), static_cast<long>(number("files_done")),
                     static_cast<long>(number("files_total")),
                     util::format_bytes_both(static_cast<std::uint64_t>(number("bytes_done"))),
                     util::format_bytes_both(static_cast<std::uint64_t>(number("bytes_total"))));
  if (seen.phase == Phase::kRunning) {
    out += fmt::format(", {}, ETA {}", util::format_rate(number("rate_bytes_per_second")),
                       f.contains("eta_seconds") && f["eta_seconds"].is_number()
                           ? util::format_duration(f["eta_seconds"].get<double>())
                           : "?");
  }
  out += "\n";
  if (seen.phase == Phase::kRunning) {
    // The record names the files with the most left and counts the others.
    const ProgressSnapshot snapshot = snapshot_of(f);
    const std::uint64_t in_flight_count = count_in(f, "files_in_flight");
    if (!snapshot.active.empty()) {
      out += fmt::format("  {}{}\n", in_flight_summary(snapshot, kNamedInFlightInStatus),
                         in_flight_count > snapshot.active.size() && snapshot.active.size() <= kNamedInFlightInStatus
                             ? fmt::format(" (+{} more)", in_flight_count - snapshot.active.size())
                             : "");
    }
  }
  if (seen.state->exit_code) out += fmt::format("  exit code {}\n", *seen.state->exit_code);
  if (!text("last_error").empty()) out += fmt::format("  last error: {}\n", text("last_error"));
  out += log_line;
  return out;
}

std::string as_json(const Observation& seen) {
  nlohmann::json out = seen.state ? seen.state->fields : nlohmann::json::object();
  out["phase"] = phase_name(seen.phase);
  out["alive"] = seen.phase == Phase::kRunning || seen.phase == Phase::kStarting;
  if (seen.phase == Phase::kDied) out["state"] = "died";
  if (seen.detached_pid) out["detached_pid"] = *seen.detached_pid;
  if (!seen.log.empty()) out["log"] = seen.log;
  return out.dump(2, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace) + "\n";
}

std::filesystem::path state_dir_from(const TargetFlags& flags) {
  return state_dir_of(
      resolve_target(flags.target, flags.repo_type, flags.cache_dir, HubEnvironment::from_process_environment()));
}

int run_status(const TargetFlags& flags) {
  const Observation seen = observe(state_dir_from(flags));
  if (flags.json) {
    std::fputs(as_json(seen).c_str(), stdout);
  } else {
    std::fputs((describe(seen) + (describe(seen).ends_with('\n') ? "" : "\n")).c_str(), stdout);
  }
  return seen.phase == Phase::kNone ? kExitNoDownload : kExitSuccess;
}

// wait's progress while the download runs (cli/stderr_progress.hpp): the download's status line, as its
// state record has it.
std::string wait_line(const Observation& seen) {
  const ProgressSnapshot snapshot = snapshot_of(seen.state->fields);
  const std::string in_flight = in_flight_summary(snapshot, kNamedInFlightInWait);
  return fmt::format("waiting for PID {}: {}{}{}", seen.state->pid, status_line(snapshot),
                     in_flight.empty() ? "" : "  ", in_flight);
}

int run_wait(const TargetFlags& flags, const RunContext& context) {
  const std::filesystem::path state_dir = state_dir_from(flags);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(flags.timeout_seconds);
  StderrProgress progress(flags.quiet, std::chrono::seconds(flags.progress_interval_seconds));
  while (true) {
    const Observation seen = observe(state_dir);
    switch (seen.phase) {
      case Phase::kNone:
        progress.clear();
        std::fputs("hfget: no hfget download has run into this target\n", stderr);
        return kExitNoDownload;
      case Phase::kDied:
        progress.clear();
        std::fputs(("hfget: " + describe(seen)).c_str(), stderr);
        return exit_code_for(ErrorCode::kInternal);
      case Phase::kEnded:
        progress.clear();
        if (!flags.quiet) std::fputs(describe(seen).c_str(), stderr);
        return seen.state->exit_code.value_or(seen.state->state == "done" ? 0 : 1);
      case Phase::kStarting:
      case Phase::kRunning: break;
    }
    if (seen.phase == Phase::kRunning && seen.state) progress.show(wait_line(seen));
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

std::function<int(const RunContext&)> add_status_command(CLI::App& app) {
  auto flags = std::make_shared<TargetFlags>();
  CLI::App* command = add_target_options(app.add_subcommand("status", "Show the state of a download"), *flags);
  command->add_flag("--json", flags->json, "Print the state as JSON");
  return [command, flags](const RunContext&) -> int { return command->parsed() ? run_status(*flags) : -1; };
}

std::function<int(const RunContext&)> add_wait_command(CLI::App& app) {
  auto flags = std::make_shared<TargetFlags>();
  CLI::App* command =
      add_target_options(app.add_subcommand("wait", "Wait for a download to end; exit with its exit code"), *flags);
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
