// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "hfget/repo.hpp"
#include "hfget/verify.hpp"

namespace hfget::verify {

/// What the checks need to know about a snapshot on disk, however it was found.
struct SnapshotOnDisk {
  std::filesystem::path root;  // where repo paths resolve (snapshots/<commit> or the local dir)
  RepoType repo_type = RepoType::kModel;
  std::string commit;
  std::optional<std::vector<RemoteFile>> listing;  // every file of the commit; nullopt if nothing recorded
  std::optional<std::set<std::string>> selected;   // what the download selected; nullopt = everything listed
  bool is_cache_snapshot = false;                  // snapshot entries are symlinks named after their blob
};

struct CheckSettings {
  bool hash = true;
  unsigned jobs = 1;
  std::set<std::string> allow_missing;
  /// verify: a model with no tokenizer or config upstream fails (unless allowed). After a download that is
  /// only a warning: the download did fetch everything there is.
  bool absent_upstream_fails = true;
  VerifyProgress* progress = nullptr;  // updated while hashing, when given
};

/// Runs every check of `hfget verify` and fills the report (checks, problems, counts).
void run_snapshot_checks(const SnapshotOnDisk& snapshot, const CheckSettings& settings, VerifyReport& report,
                         std::stop_token stop);

}  // namespace hfget::verify
