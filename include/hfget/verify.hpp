// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "hfget/hub_connection.hpp"
#include "hfget/repo.hpp"
#include "hfget/target.hpp"

namespace hfget {

enum class CheckStatus { kPass, kFail, kSkip };
std::string_view to_string(CheckStatus status) noexcept;

/// One named check of the report: completeness, sizes, hashes, shard_set, safetensors_headers, config, tokenizer.
struct CheckResult {
  std::string name;
  CheckStatus status = CheckStatus::kPass;
  std::string detail;  // one line: what was checked, or why it failed or was skipped
};

/// A file that failed a check, and why ("missing", "size 10 != 12", "sha256 mismatch: …").
struct FileProblem {
  std::string path;
  std::string check;
  std::string cause;
};

struct VerifyReport {
  std::string repo;  // "org/name", when known
  std::string commit;
  std::filesystem::path root;
  std::vector<CheckResult> checks;
  std::vector<FileProblem> problems;
  std::size_t files_expected = 0;
  std::size_t files_present = 0;
  std::size_t files_excluded = 0;  // in the commit, not selected by the download
  std::size_t shards_expected = 0;
  std::size_t shards_present = 0;
  std::uint64_t bytes_expected = 0;  // by the listing; 0 without one
  std::uint64_t bytes_present = 0;   // on disk, of the files found (what `du` would count, without a listing too)
  std::uint64_t bytes_hashed = 0;
  bool has_listing = false;  // sizes and hashes were checked against a listing
  bool hashed = false;       // the hashes check read the files (not --fast, a listing was there)
  std::chrono::duration<double> elapsed{};

  bool ok() const noexcept;
};

/// How far a running verify is, for a progress display: the hashing threads add to it as they read.
struct VerifyProgress {
  std::atomic<std::size_t> files_to_hash{0};
  std::atomic<std::size_t> files_hashed{0};
  std::atomic<std::uint64_t> bytes_to_hash{0};
  std::atomic<std::uint64_t> bytes_hashed{0};
};

struct VerifyOptions {
  std::optional<std::filesystem::path> local_dir;  // else the HF cache
  std::filesystem::path cache_dir;
  RepoId repo;                          // for the cache; ignored for a local dir
  std::string revision = "main";        // branch, tag or commit (cache); local dir: the one recorded
  bool online = false;                  // re-read the listing from the Hub
  HubConnection hub;                    // --online requests
  unsigned jobs = 0;                    // hashing threads; 0 = the number of cores
  bool fast = false;                    // no hashing: sizes, headers, structure only
  std::set<std::string> allow_missing;  // "tokenizer", "config"
  VerifyProgress* progress = nullptr;   // updated while it runs, when given

  /// What is checked: `local_dir` when set, else `repo` in `cache_dir`.
  Target target() const;
};

/// Checks a downloaded snapshot, offline from what the download recorded unless `online`. Throws Error for
/// a target that cannot be found (kRepoNotFound, kRevisionNotFound, kUsage); problems with the files are in
/// the report, never thrown.
VerifyReport verify_snapshot(const VerifyOptions& options, std::stop_token stop);

}  // namespace hfget
