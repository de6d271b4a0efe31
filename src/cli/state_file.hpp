// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace hfget::cli {

/// <state dir>/state.json: what `hfget status` and `hfget wait` read. Written by the download that holds the
/// target lock, atomically, every 2 s and once at the end, into space reserved at its first write (so that a
/// full disk does not lose the last one: util/reserved_record_file.hpp). Field names are documented in
/// docs/deployment.md.
struct DownloadState {
  long pid = 0;
  std::optional<std::chrono::system_clock::time_point> started_at;  // the run was under way by then
  std::string state;                                                // "running", "done", "failed", "interrupted"
  std::optional<int> exit_code;
  nlohmann::json fields;  // everything, as written
};

std::filesystem::path state_file_path(const std::filesystem::path& state_dir);
/// <state dir>/detached.json: the PID a --detach launch started, written before it takes the target lock.
std::filesystem::path detached_file_path(const std::filesystem::path& state_dir);

std::optional<DownloadState> read_state_file(const std::filesystem::path& path);
/// What detached.json records: the launched process, a time by which it was running, and its log.
struct DetachedLaunch {
  long pid = 0;
  std::optional<std::chrono::system_clock::time_point> started_at;
  std::string log;  // empty in a record an older hfget wrote
};
std::optional<DetachedLaunch> read_detached_launch(const std::filesystem::path& state_dir);
void write_detached_launch(const std::filesystem::path& state_dir, long pid, const std::filesystem::path& log);

/// True while the process a record names exists and is still that process: a live, non-zombie process with
/// this PID that did not start after `running_at` (PIDs are reused, after a reboot above all: a download the
/// reboot killed must read as died, not as running under someone else's PID).
bool process_alive(long pid, std::optional<std::chrono::system_clock::time_point> running_at);

}  // namespace hfget::cli
