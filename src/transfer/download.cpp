// SPDX-License-Identifier: MIT
// `hfget download` as a sequence of named steps: pin the commit, list, select (transfer/listing.cpp, shared
// with `hfget ls`), plan against what is on disk, fetch the rest in parallel, report. Each step is a function;
// the data between them are plain values.
#include "hfget/download.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <thread>

#include "hfget/error.hpp"
#include "hub/hub_client.hpp"
#include "store/download_record.hpp"
#include "store/free_space.hpp"
#include "store/layout.hpp"
#include "store/repo_path.hpp"
#include "store/target_lock.hpp"
#include "transfer/download_steps.hpp"
#include "transfer/fetch_all.hpp"
#include "transfer/listing.hpp"
#include "transfer/offline_snapshot.hpp"
#include "transfer/publish.hpp"
#include "util/byte_size.hpp"
#include "verify/file_hashing.hpp"
#include "verify/snapshot_checks.hpp"

namespace hfget {

namespace transfer {

http::TransportSettings transport_settings(const DownloadOptions& options) {
  http::TransportSettings transport;
  transport.stall_timeout = options.stall_timeout;
  transport.speed_limit = options.speed_limit;
  transport.ca_bundle = options.ca_bundle;
  transport.ca_path = options.ca_path;
  return transport;
}

hub::HubClientSettings hub_settings(const DownloadOptions& options) {
  return {options.endpoint,     options.endpoint_origin,  options.token,         transport_settings(options),
          options.max_attempts, options.retry_base_delay, options.retry_max_time};
}

std::unique_ptr<store::Layout> open_layout(const DownloadOptions& options, const std::string& commit) {
  if (options.local_dir) return store::make_local_dir_layout(*options.local_dir, commit);
  return store::make_cache_layout(
      options.cache_dir, options.repo, commit,
      options.symlinks_disabled ? store::SnapshotFiles::kRealFiles : store::SnapshotFiles::kSymlinksWhereSupported);
}

std::vector<PlannedFile> plan_against_disk(const std::vector<RemoteFile>& selected, const store::Layout& layout) {
  std::vector<PlannedFile> plan;
  plan.reserve(selected.size());
  for (const RemoteFile& file : selected) plan.push_back(PlannedFile{file, layout.is_complete(file)});
  return plan;
}

}  // namespace transfer

namespace {

using transfer::hub_settings;
using transfer::open_layout;
using transfer::plan_against_disk;
using transfer::transport_settings;

void validate_options(const DownloadOptions& options) {
  if (options.max_workers < 1 || options.max_workers > 256) {
    throw Error(ErrorCode::kUsage, "--max-workers must be between 1 and 256");
  }
  if (options.connections < 1 || options.connections > 256) {
    throw Error(ErrorCode::kUsage, "--connections must be between 1 and 256");
  }
  if (options.revision.empty()) throw Error(ErrorCode::kUsage, "--revision must not be empty");
  // The revision names a file under refs/: it must be a safe relative path ("refs/pr/1" is fine).
  if (store::unsafe_path_reason(options.revision)) {
    throw Error(ErrorCode::kUsage, "invalid revision '" + options.revision + "'");
  }
  if (!options.offline && options.endpoint.rfind("http://", 0) != 0 && options.endpoint.rfind("https://", 0) != 0) {
    throw Error(ErrorCode::kUsage, "the endpoint must be an http:// or https:// URL: " + options.endpoint);
  }
}

// Worst first: what the exit code reports when several files fail in different ways.
int severity(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInterrupted: return 0;
    case ErrorCode::kDiskFull: return 1;
    case ErrorCode::kNotWritable: return 1;  // like a full disk: nothing more can be written there
    case ErrorCode::kVerificationFailed: return 2;
    case ErrorCode::kInternal: return 3;
    case ErrorCode::kAccessDenied: return 4;
    case ErrorCode::kRepoNotFound: return 5;
    case ErrorCode::kRevisionNotFound: return 6;
    case ErrorCode::kFileNotFound: return 7;
    case ErrorCode::kNetwork: return 8;
    case ErrorCode::kUsage: return 9;
    case ErrorCode::kBusy: return 10;
  }
  return 10;
}

// The checks of `hfget verify` on what was just downloaded, without re-reading the bytes: each was hashed
// on arrival, and files found complete were trusted by size and recorded etag, as a re-run must be cheap
// (or were hashed just before, with --verify).
VerifyReport check_snapshot(const Snapshot& snapshot, const std::vector<RemoteFile>& selected,
                            const store::Layout& layout, const DownloadOptions& options, std::stop_token stop) {
  verify::SnapshotOnDisk on_disk;
  on_disk.root = layout.snapshot_path();
  on_disk.repo_type = options.repo.type;
  on_disk.commit = snapshot.commit;
  on_disk.listing = snapshot.files;
  on_disk.selected = std::set<std::string>();
  for (const RemoteFile& file : selected) on_disk.selected->insert(file.path);
  on_disk.is_cache_snapshot = !options.local_dir.has_value();
  verify::CheckSettings settings;
  settings.hash = false;
  settings.absent_upstream_fails = false;
  VerifyReport report;
  report.repo = options.repo.name;
  report.commit = snapshot.commit;
  report.root = on_disk.root;
  verify::run_snapshot_checks(on_disk, settings, report, std::move(stop));
  return report;
}

// --force-download: every file is fetched again, the copies on disk replaced only once the new bytes matched.
void plan_to_replace_everything(std::vector<PlannedFile>& plan) {
  for (PlannedFile& planned : plan) {
    planned.replace = planned.complete;
    planned.complete = false;
  }
}

// --verify: the files found complete are hashed from the disk (all cores), and exactly those that fail are
// fetched again. A plain re-run trusts them (size, and hfget's record in a local dir): bit rot or an edit
// that kept the size and times would otherwise stay for ever.
void plan_to_repair(std::vector<PlannedFile>& plan, const store::Layout& layout, DownloadReport& report,
                    const std::stop_token& stop) {
  std::vector<verify::HashJob> jobs;
  std::vector<std::size_t> planned_index;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (!plan[i].complete) continue;
    jobs.push_back({layout.content_path(plan[i].file), plan[i].file});
    planned_index.push_back(i);
  }
  std::uint64_t bytes_hashed = 0;
  const std::vector<verify::HashOutcome> outcomes =
      verify::hash_files(jobs, std::max(1U, std::thread::hardware_concurrency()), bytes_hashed, stop);
  if (stop.stop_requested()) throw Error(ErrorCode::kInterrupted, "interrupted");
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    if (outcomes[k].matches) {
      ++report.files_hashed_on_disk;
      continue;
    }
    PlannedFile& planned = plan[planned_index[k]];
    spdlog::warn("{}: {} on disk ({}); fetching it again", planned.file.path,
                 outcomes[k].actual.empty() ? "unreadable"
                                            : fmt::format("{} mismatch: expected {}, got {}", outcomes[k].algorithm,
                                                          planned.file.etag(), outcomes[k].actual),
                 outcomes[k].actual.empty() ? outcomes[k].error : "rotted or edited since it was published");
    planned.complete = false;
    planned.replace = true;
    ++report.files_repaired;
  }
}

[[noreturn]] void throw_failed_checks(const VerifyReport& report, const DownloadOptions& options) {
  std::string causes;
  for (std::size_t i = 0; i < report.problems.size() && i < 3; ++i) {
    causes += fmt::format("{}{}: {}", i == 0 ? "" : "; ", report.problems[i].path, report.problems[i].cause);
  }
  if (report.problems.size() > 3) causes += fmt::format(" (and {} more; run hfget verify)", report.problems.size() - 3);
  if (causes.empty()) {
    for (const CheckResult& check : report.checks) {
      if (check.status == CheckStatus::kFail) causes += (causes.empty() ? "" : "; ") + check.name + ": " + check.detail;
    }
  }
  // The files were found complete, so a plain re-run would fail the same way: name the repair.
  const std::string fix =
      options.verify_present || options.force_download
          ? ""
          : "; to repair it, run the same download with --verify (hashes the files on disk and fetches again "
            "exactly those that fail), or with --force-download (fetches every file again)";
  throw Error(ErrorCode::kVerificationFailed, "the downloaded snapshot failed its checks: " + causes + fix);
}

[[noreturn]] void throw_worst(const std::vector<std::optional<Error>>& errors, const std::optional<Error>& stop_cause) {
  if (stop_cause) {
    const auto others = std::count_if(errors.begin(), errors.end(), [](const auto& e) { return e.has_value(); });
    throw Error(stop_cause->code(),
                fmt::format("{} ({} file(s) not finished; {}run again to resume)", stop_cause->what(), others,
                            stop_cause->code() == ErrorCode::kDiskFull ? "free space and " : ""),
                stop_cause->file());
  }
  const std::optional<Error>* worst = nullptr;
  std::size_t failed = 0;
  for (const std::optional<Error>& error : errors) {
    if (!error) continue;
    ++failed;
    if (worst == nullptr || severity(error->code()) < severity((*worst)->code())) worst = &error;
  }
  const Error& chosen = **worst;
  if (failed == 1 || chosen.code() == ErrorCode::kInterrupted) throw chosen;
  throw Error(chosen.code(),
              fmt::format("{} (and {} more file(s) failed; run again to resume)", chosen.what(), failed - 1),
              chosen.file());
}

// Refuses to start a download that cannot fit: one line with both numbers in GB and GiB, and the path.
void ensure_free_space(const DownloadReport& report, const std::filesystem::path& where) {
  if (!report.free_bytes || report.bytes_to_fetch <= *report.free_bytes) return;
  throw Error(ErrorCode::kDiskFull,
              fmt::format("not enough space on {}: {} still to download, {} free; free some space or pass "
                          "--no-space-check",
                          where.string(), util::format_bytes_both(report.bytes_to_fetch),
                          util::format_bytes_both(*report.free_bytes)),
              where);
}

std::filesystem::path target_root(const DownloadOptions& options) {
  return options.local_dir ? *options.local_dir : options.cache_dir;
}

store::TargetLock lock_target(const DownloadOptions& options, ProgressSink& progress, const std::stop_token& stop) {
  return store::TargetLock::acquire(prepare_state_dir(options), options.wait_for_lock, stop,
                                    [&](std::optional<long> pid) { progress.on_waiting_for_target(pid); });
}

// A gated repo lists its files to anyone and refuses their contents: asked once, before anything is written
// and before any file, that is one line with the page to accept the licence on, not one failure per file.
// Only a file still to fetch is asked for: what is on disk already needs no access.
void check_access_to_files(hub::HubClient& hub, const DownloadOptions& options, const std::string& commit,
                           const std::vector<RemoteFile>& selected) {
  const std::vector<PlannedFile> plan = plan_against_disk(selected, *open_layout(options, commit));
  const auto first = std::find_if(plan.begin(), plan.end(), [](const PlannedFile& p) { return !p.complete; });
  if (first != plan.end()) hub.check_file_access(options.repo, commit, first->file.path);
}

}  // namespace

std::filesystem::path state_dir_for(const DownloadOptions& options) {
  return options.local_dir ? store::state_dir_in_local_dir(*options.local_dir)
                           : store::state_dir_in_cache(options.cache_dir, options.repo);
}

std::filesystem::path prepare_state_dir(const DownloadOptions& options) {
  const std::filesystem::path root = target_root(options);
  std::filesystem::create_directories(root);
  const std::filesystem::path state_dir = state_dir_for(options);
  store::create_directories_within(root, state_dir.lexically_relative(root));
  return state_dir;
}

std::optional<long> target_holder(const DownloadOptions& options) {
  return store::TargetLock::holder(state_dir_for(options));
}

std::filesystem::path check_download_source(const DownloadOptions& options, std::stop_token stop) {
  validate_options(options);
  if (options.offline) return transfer::offline_snapshot(options).snapshot_path;
  // The client, its easy handle and its connections end with this scope. libcurl's threaded resolver runs
  // one thread per name lookup and joins it when the lookup is done; only a lookup abandoned half-way (a
  // timeout) leaves its thread to finish alone, and then the request failed and this throws.
  hub::HubClient hub(hub_settings(options), stop);
  const hub::RevisionInfo revision = transfer::pin_revision(hub, options.repo, options.revision);
  // The selection too: a named file that is not there, or patterns that keep nothing, fail now (exit 6).
  const transfer::SelectedListing listed =
      transfer::list_and_select(hub, options.repo, revision.commit, options.selection);
  if (revision.gated) check_access_to_files(hub, options, revision.commit, listed.selected);
  return open_layout(options, revision.commit)->snapshot_path();
}

DownloadReport download(const DownloadOptions& options, ProgressSink& progress, std::stop_token stop) {
  const auto started = std::chrono::steady_clock::now();
  validate_options(options);
  if (options.offline) return transfer::offline_snapshot(options);

  hub::HubClient hub(hub_settings(options), stop);

  // Pin the revision first, so that a push during the download cannot mix two commits (a full commit id is
  // asked for too: see pin_revision). Then list, validate and select: the same step `hfget ls` shows
  // (transfer/listing.hpp).
  Snapshot snapshot;
  const hub::RevisionInfo revision = transfer::pin_revision(hub, options.repo, options.revision);
  snapshot.commit = revision.commit;
  transfer::SelectedListing listed = transfer::list_and_select(hub, options.repo, snapshot.commit, options.selection);
  snapshot.files = std::move(listed.files);
  const std::vector<RemoteFile> selected = std::move(listed.selected);
  if (revision.gated && !options.dry_run) check_access_to_files(hub, options, snapshot.commit, selected);

  // One hfget per target: a second run queues here (or fails with --no-wait). Only now, once the repo is known
  // to exist, does anything touch the disk: a typo in a repo id leaves no folder in the cache.
  std::optional<store::TargetLock> target_lock;
  if (!options.dry_run) target_lock.emplace(lock_target(options, progress, stop));

  // Files already complete on disk cost no request: a re-run does the listing and nothing else.
  const std::unique_ptr<store::Layout> layout = open_layout(options, snapshot.commit);
  layout->check_paths(selected);
  DownloadReport report;
  report.commit = snapshot.commit;
  report.snapshot_path = layout->snapshot_path();
  report.files = plan_against_disk(selected, *layout);
  if (options.force_download) {
    plan_to_replace_everything(report.files);
  } else if (options.verify_present) {
    plan_to_repair(report.files, *layout, report, stop);
  }
  DownloadPlanSummary summary;
  summary.commit = snapshot.commit;
  summary.files_selected = report.files.size();
  for (const PlannedFile& planned : report.files) {
    report.bytes_selected += planned.file.size;
    const bool is_shard = is_weight_file(planned.file.path);
    summary.shards_selected += is_shard ? 1 : 0;
    if (planned.complete) {
      summary.bytes_already_complete += planned.file.size;
      summary.shards_already_complete += is_shard ? 1 : 0;
      ++report.files_already_complete;
    } else {
      const std::uint64_t resumable = layout->partial_bytes(planned.file);
      summary.bytes_resumable += resumable;
      report.bytes_to_fetch += planned.file.size - resumable;
      ++summary.files_to_fetch;
    }
  }
  summary.bytes_selected = report.bytes_selected;
  report.free_bytes = store::free_bytes(target_root(options));
  if (options.dry_run) return report;
  if (options.check_space) ensure_free_space(report, target_root(options));

  // Record the commit before fetching (refs/, trees/), as the Python client does, so that an interrupted
  // download is recognisable as incomplete rather than mistaken for the whole snapshot.
  layout->prepare(snapshot, selected, options.revision);
  for (const PlannedFile& planned : report.files) {
    if (planned.complete) layout->link_existing(planned.file);
  }
  progress.on_plan(summary);

  // fetch → verify → publish, file by file: fetch_all fetches each file's ranges, IncomingFile::verify checks
  // its hash as the last byte arrives, and the publish step (publish_into the layout) makes it visible at once.
  const transfer::PublishStep publish = transfer::publish_into(*layout);
  transfer::FetchResults fetched = transfer::fetch_all(report.files, options, snapshot.commit, report.bytes_to_fetch,
                                                       *layout, publish, progress, stop);
  report.bytes_received = fetched.bytes_received;
  report.files_fetched = fetched.files_fetched;
  report.elapsed = std::chrono::steady_clock::now() - started;
  if (std::any_of(fetched.errors.begin(), fetched.errors.end(), [](const auto& e) { return e.has_value(); })) {
    throw_worst(fetched.errors, fetched.stop_cause);
  }
  report.checks = check_snapshot(snapshot, selected, *layout, options, stop);
  report.elapsed = std::chrono::steady_clock::now() - started;
  if (!report.checks.ok()) throw_failed_checks(report.checks, options);
  return report;
}

}  // namespace hfget
