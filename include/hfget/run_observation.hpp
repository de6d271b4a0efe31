// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "hfget/run_record.hpp"

namespace hfget {

/// Where a download into one target stands, judged from its records against the processes that exist now.
enum class RunPhase {
  kNone,      // no record: no hfget download has run into this target
  kStarting,  // a --detach launch is alive and has not taken over the run record yet (starting, or queued)
  kRunning,   // the record says running, and its process is alive
  kDied,      // the record says running but its process is gone (killed, crashed, a reboot), or a launch
              // died before it wrote a record
  kEnded,     // the record says how the run ended (done, failed, interrupted)
};

struct RunObservation {
  RunPhase phase = RunPhase::kNone;
  std::optional<RunRecord> record;
  std::optional<long> detached_pid;  // the PID detached.json names
  std::string log;                   // where the download's lines go, when it has a log file
};

/// Reads <state dir>/state.json and detached.json and judges them. Never throws for what the files hold.
RunObservation observe_run(const std::filesystem::path& state_dir);

/// True when the record at `path` says running and names a live process other than `own_pid`: a run that
/// failed before it held the target lock must not record its outcome over that one's.
bool another_run_is_recorded_live(const std::filesystem::path& path, long own_pid);

/// True while the process a record names exists and is still that process: a live, non-zombie process with
/// this PID that did not start after `running_at` (PIDs are reused, after a reboot above all: a download the
/// reboot killed must read as died, not as running under someone else's PID).
bool process_alive(long pid, std::optional<std::chrono::system_clock::time_point> running_at);

}  // namespace hfget
