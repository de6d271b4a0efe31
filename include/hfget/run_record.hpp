// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace hfget {

/// A file in flight, as the run record names it.
struct RunRecordFile {
  std::string path;
  std::uint64_t size = 0;
  std::uint64_t bytes_done = 0;
};

/// <state dir>/state.json: where the download that holds the target's lock stands, what `hfget status` and
/// `hfget wait` read. The field names are the file's (documented in docs/deployment.md). The file comes from
/// disk, so reading it trusts nothing: a field of the wrong type reads as its default.
struct RunRecord {
  long pid = 0;
  std::string state;  // "running", "done", "failed", "interrupted"
  std::optional<int> exit_code;
  std::string repo;
  std::string revision;
  std::string commit;
  std::string target;
  std::string started_at;  // UTC, as util/utc_timestamp.hpp writes it: by then the run was under way
  std::string updated_at;
  std::uint64_t files_done = 0;
  std::uint64_t files_total = 0;
  std::uint64_t shards_done = 0;
  std::uint64_t shards_total = 0;
  std::uint64_t bytes_done = 0;
  std::uint64_t bytes_total = 0;
  double rate_bytes_per_second = 0;
  std::optional<double> eta_seconds;
  std::string last_error;
  /// The files in flight. The record names at most kRunRecordNamedFiles of them, those with the most bytes
  /// left (the ones the download will wait for last); files_in_flight counts them all.
  std::vector<RunRecordFile> in_flight;
  std::uint64_t files_in_flight = 0;
  std::string log_file;  // where the run's log lines go (--log-file); empty: none
  /// Set by read_run_record: the file's JSON object as it was read, for `status --json`, which prints every
  /// field as written (also the fields another hfget version writes, or lacks). Not written.
  std::string as_written;
};

inline constexpr std::size_t kRunRecordNamedFiles = 10;

std::filesystem::path run_record_path(const std::filesystem::path& state_dir);

/// Writes the record at `path` (a run_record_path) atomically into space reserved at its first write, so
/// that a full disk does not lose the last one (util/reserved_record_file.hpp): long texts are shortened and
/// files in flight left unnamed until it fits. Throws hfget::Error when it cannot.
void write_run_record(const std::filesystem::path& path, const RunRecord& record);

/// The record at `path`; nullopt when there is none, or what is there is not a record (no integer "pid" and
/// string "state", not JSON, torn, nested deeper than a record is, or over 1 MiB).
std::optional<RunRecord> read_run_record(const std::filesystem::path& path);

/// <state dir>/detached.json: what a --detach launch records of the process it started, before that
/// process takes the target lock: the PID, a time by which it was running, and its log.
struct DetachedLaunch {
  long pid = 0;
  std::optional<std::chrono::system_clock::time_point> started_at;
  std::string log;  // empty in a record an older hfget wrote
};

std::filesystem::path detached_launch_path(const std::filesystem::path& state_dir);
/// Records this moment as the launch's start. Throws hfget::Error when it cannot.
void write_detached_launch(const std::filesystem::path& state_dir, long pid, const std::filesystem::path& log);
/// nullopt when there is none, or it has no integer "pid".
std::optional<DetachedLaunch> read_detached_launch(const std::filesystem::path& state_dir);

}  // namespace hfget
