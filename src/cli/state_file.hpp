// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace hfget::cli {

/// <state dir>/state.json: what `hfget status` and `hfget wait` read. Written by the download that holds the
/// target lock, atomically, every 2 s and once at the end. Field names are documented in docs/deployment.md.
struct DownloadState {
  long pid = 0;
  std::string state;  // "running", "done", "failed", "interrupted"
  std::optional<int> exit_code;
  nlohmann::json fields;  // everything, as written
};

std::filesystem::path state_file_path(const std::filesystem::path& state_dir);
/// <state dir>/detached.json: the PID a --detach launch started, written before it takes the target lock.
std::filesystem::path detached_file_path(const std::filesystem::path& state_dir);

std::optional<DownloadState> read_state_file(const std::filesystem::path& path);
/// The PID recorded in detached.json, if any.
std::optional<long> read_detached_pid(const std::filesystem::path& state_dir);
void write_detached_pid(const std::filesystem::path& state_dir, long pid);

/// True while a process with this PID exists (it may belong to someone else after a reboot; the state file's
/// start time makes that unlikely to matter).
bool process_alive(long pid);

}  // namespace hfget::cli
