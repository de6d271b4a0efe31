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
#include "store/layout.hpp"
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

std::string find_commit(const VerifyOptions& options) {
  if (options.local_dir) {
    if (hub::is_commit_id(options.revision)) return options.revision;
    if (std::optional<std::string> commit = store::recorded_commit_in_local_dir(*options.local_dir)) return *commit;
    throw Error(
        ErrorCode::kRevisionNotFound,
        fmt::format("'{}' holds no record of a download (no .cache/huggingface/trees/<commit>.json, or several); "
                    "pass --revision <commit>",
                    options.local_dir->string()));
  }
  if (hub::is_commit_id(options.revision)) return options.revision;
  std::optional<std::string> commit =
      store::recorded_commit_in_cache(options.cache_dir, options.repo, options.revision);
  if (!commit || !hub::is_commit_id(*commit)) {
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

}  // namespace

VerifyReport verify_snapshot(const VerifyOptions& options, std::stop_token stop) {
  const auto started = std::chrono::steady_clock::now();
  if (options.local_dir && !std::filesystem::is_directory(*options.local_dir)) {
    throw Error(ErrorCode::kRepoNotFound, "no such directory: " + options.local_dir->string());
  }
  verify::SnapshotOnDisk snapshot;
  snapshot.commit = find_commit(options);
  snapshot.repo_type = options.repo.type;
  if (options.local_dir) {
    snapshot.root = *options.local_dir;
    snapshot.listing = store::recorded_listing_in_local_dir(*options.local_dir, snapshot.commit);
  } else {
    snapshot.root = options.cache_dir / cache_folder_name(options.repo) / "snapshots" / snapshot.commit;
    snapshot.is_cache_snapshot = true;
    snapshot.listing = store::recorded_listing_in_cache(options.cache_dir, options.repo, snapshot.commit);
    if (!std::filesystem::is_directory(snapshot.root)) {
      throw Error(ErrorCode::kRevisionNotFound, "no snapshot of commit " + snapshot.commit + " in the cache");
    }
  }
  if (options.online) {
    hub::HubClientSettings settings;
    settings.endpoint = options.endpoint;
    settings.endpoint_origin = options.endpoint_origin;
    settings.token = options.token;
    settings.transport.ca_bundle = options.ca_bundle;
    settings.transport.ca_path = options.ca_path;
    settings.max_attempts = options.max_attempts;
    settings.retry_base_delay = options.retry_base_delay;
    hub::HubClient hub(std::move(settings), stop);
    std::vector<RemoteFile> listing = hub.list_files(options.repo, snapshot.commit);
    store::validate_listing(listing);  // its paths are joined to the snapshot folder and read
    snapshot.listing = std::move(listing);
  }
  const std::filesystem::path record_path =
      options.local_dir ? store::record_path_in_local_dir(*options.local_dir, snapshot.commit)
                        : store::record_path_in_cache(options.cache_dir, options.repo, snapshot.commit);
  if (std::optional<store::DownloadRecord> record = store::read_download_record(record_path)) {
    snapshot.selected = std::set<std::string>(record->selected.begin(), record->selected.end());
  }

  verify::CheckSettings settings;
  settings.hash = !options.fast;
  settings.jobs = options.jobs > 0 ? options.jobs : std::max(1U, std::thread::hardware_concurrency());
  settings.allow_missing = options.allow_missing;
  settings.progress = options.progress;

  VerifyReport report;
  report.repo = options.local_dir ? "" : options.repo.name;
  report.commit = snapshot.commit;
  report.root = snapshot.root;
  verify::run_snapshot_checks(snapshot, settings, report, std::move(stop));
  report.elapsed = std::chrono::steady_clock::now() - started;
  return report;
}

}  // namespace hfget
