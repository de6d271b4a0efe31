// SPDX-License-Identifier: MIT
// A record says what its process last wrote; only the process table says whether that process is still there.
// A state that says "running" whose PID is gone means the download was killed or crashed: status says so, and
// wait returns instead of waiting forever. A --detach launch writes detached.json before it can write the
// state, so for a while the only sign of it is that PID.
#include "hfget/run_observation.hpp"

#include <signal.h>

#include <cerrno>
#include <limits>

#include "util/process_owner.hpp"
#include "util/utc_timestamp.hpp"

namespace hfget {
namespace {

std::optional<std::chrono::system_clock::time_point> started_at_of(const RunRecord& record) {
  return util::parse_utc_timestamp(record.started_at);
}

// The state's own log (--log-file), else the detached launch's, when that launch is the state's run or has
// not reported yet.
std::string log_of(const std::optional<RunRecord>& record, const std::optional<DetachedLaunch>& launch) {
  if (record && !record->log_file.empty()) return record->log_file;
  if (launch && (!record || record->pid == launch->pid)) return launch->log;
  return "";
}

RunPhase phase_of(const std::optional<RunRecord>& record, const std::optional<DetachedLaunch>& launch) {
  const bool launch_alive = launch && process_alive(launch->pid, launch->started_at);
  if (record && record->state == "running") {
    if (process_alive(record->pid, started_at_of(*record))) return RunPhase::kRunning;
    // Gone; but a new launch may be about to take its place.
    return launch_alive && launch->pid != record->pid ? RunPhase::kStarting : RunPhase::kDied;
  }
  // A detached launch that has not taken over the state file yet (starting, or queued behind another run).
  if (launch_alive && (!record || record->pid != launch->pid)) return RunPhase::kStarting;
  if (record) return RunPhase::kEnded;
  return launch ? RunPhase::kDied : RunPhase::kNone;  // launched, gone, and never wrote a state
}

RunObservation read_once(const std::filesystem::path& state_dir) {
  RunObservation seen;
  seen.record = read_run_record(run_record_path(state_dir));
  const std::optional<DetachedLaunch> launch = read_detached_launch(state_dir);
  if (launch) seen.detached_pid = launch->pid;
  seen.log = log_of(seen.record, launch);
  seen.phase = phase_of(seen.record, launch);
  return seen;
}

}  // namespace

RunObservation observe_run(const std::filesystem::path& state_dir) {
  RunObservation seen = read_once(state_dir);
  // A run that writes its final state and exits between the read above and the look at the process table
  // reads as "running, PID gone". Read once more: a process found gone writes nothing after, so the second
  // read is the last word (a finished run, or a run that really died).
  if (seen.phase == RunPhase::kDied) seen = read_once(state_dir);
  return seen;
}

bool another_run_is_recorded_live(const std::filesystem::path& path, long own_pid) {
  const std::optional<RunRecord> current = read_run_record(path);
  return current && current->state == "running" && current->pid != own_pid &&
         process_alive(current->pid, started_at_of(*current));
}

bool process_alive(long pid, std::optional<std::chrono::system_clock::time_point> running_at) {
  // Not a process's PID (kill() would read 0 and negatives as process groups, and a PID past pid_t's range
  // would wrap to another process's).
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  // A killed process nobody has reaped yet (a daemon whose parent is a container's PID 1 that does not reap)
  // still answers kill(pid, 0); /proc says 'Z' for it. What /proc does not show is presumed alive.
  const std::optional<util::ProcessStat> process = util::read_process_stat(pid);
  if (!process) return true;
  return process->state != 'Z' && !(running_at && util::started_after(*process, *running_at));
}

}  // namespace hfget
