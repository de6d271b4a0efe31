// SPDX-License-Identifier: MIT
// `hfget verify`: find the snapshot (a local dir, or a repo + revision in the cache), find what the download
// recorded about it (trees/<commit>.json for sizes and hashes, hfget/<commit>.json for the selection), or
// ask the Hub with --online, then run the checks.
#include "hfget/verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "hfget/error.hpp"
#include "hub/hub_client.hpp"
#include "store/download_record.hpp"
#include "store/repo_path.hpp"
#include "verify/snapshot_checks.hpp"

namespace hfget {

std::string_view to_string(CheckStatus status) noexcept {
  switch (status) {
    case CheckStatus::kPass: return "pass";
    case CheckStatus::kFail: return "fail";
    case CheckStatus::kSkip: return "skip";
  }
  return "fail";
}

bool VerifyReport::ok() const noexcept {
  return std::none_of(checks.begin(), checks.end(),
                      [](const CheckResult& c) { return c.status == CheckStatus::kFail; });
}

namespace {

// A local dir records one commit (trees/<commit>.json), the cache one per revision (refs/<revision>).
std::string find_commit(const VerifyOptions& options, const Target& target) {
  const std::optional<std::string> commit = target.recorded_commit(options.revision);
  if (!target.is_cache()) {
    if (commit) return *commit;
    throw Error(
        ErrorCode::kRevisionNotFound,
        fmt::format("'{}' holds no record of a download (no .cache/huggingface/trees/<commit>.json, or several); "
                    "pass --revision <commit>",
                    target.root().string()));
  }
  if (!commit || !is_commit_id(*commit)) {
    const std::filesystem::path repo_dir = options.cache_dir / cache_folder_name(options.repo);
    if (!std::filesystem::exists(repo_dir)) {
      throw Error(ErrorCode::kRepoNotFound, fmt::format("{} '{}' is not in the cache {}", to_string(options.repo.type),
                                                        options.repo.name, options.cache_dir.string()));
    }
    throw Error(ErrorCode::kRevisionNotFound,
                fmt::format("revision '{}' of '{}' is not in the cache", options.revision, options.repo.name));
  }
  return *commit;
}

// The snapshot's folder and what the download recorded about it (or, --online, what the Hub lists now).
verify::SnapshotOnDisk find_snapshot(const VerifyOptions& options, const Target& target, std::stop_token stop) {
  if (!target.is_cache() && !std::filesystem::is_directory(target.root())) {
    throw Error(ErrorCode::kRepoNotFound, "no such directory: " + target.root().string());
  }
  verify::SnapshotOnDisk snapshot;
  snapshot.commit = find_commit(options, target);
  snapshot.repo_type = options.repo.type;
  snapshot.root = target.snapshot_path(snapshot.commit);
  snapshot.is_cache_snapshot = target.is_cache();
  snapshot.listing = target.recorded_listing(snapshot.commit);
  if (target.is_cache() && !std::filesystem::is_directory(snapshot.root)) {
    throw Error(ErrorCode::kRevisionNotFound, "no snapshot of commit " + snapshot.commit + " in the cache");
  }
  if (options.online) {
    hub::HubClient hub(options.hub, std::move(stop));
    std::vector<RemoteFile> listing = hub.list_files(options.repo, snapshot.commit);
    store::validate_listing(listing);  // its paths are joined to the snapshot folder and read
    snapshot.listing = std::move(listing);
  }
  if (std::optional<store::DownloadRecord> record = store::read_download_record(target.record_path(snapshot.commit))) {
    snapshot.selected = std::set<std::string>(record->selected.begin(), record->selected.end());
  }
  return snapshot;
}

}  // namespace

Target VerifyOptions::target() const {
  return local_dir ? Target::in_local_dir(*local_dir, repo.type) : Target::in_cache(cache_dir, repo);
}

VerifyReport verify_snapshot(const VerifyOptions& options, std::stop_token stop) {
  const auto started = std::chrono::steady_clock::now();
  check_hub_connection(options.hub);
  const Target target = options.target();
  const verify::SnapshotOnDisk snapshot = find_snapshot(options, target, stop);

  verify::CheckSettings settings;
  settings.hash = !options.fast;
  settings.jobs = options.jobs > 0 ? options.jobs : std::max(1U, std::thread::hardware_concurrency());
  settings.allow_missing = options.allow_missing;
  settings.progress = options.progress;

  VerifyReport report;
  report.repo = target.is_cache() ? options.repo.name : "";
  report.commit = snapshot.commit;
  report.root = snapshot.root;
  verify::run_snapshot_checks(snapshot, settings, report, std::move(stop));
  report.elapsed = std::chrono::steady_clock::now() - started;
  return report;
}

}  // namespace hfget
