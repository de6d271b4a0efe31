// SPDX-License-Identifier: MIT
// `hfget download` as a sequence of named steps, each a function below and `download()` at the bottom the
// table of contents: resolve, list, validate, select (resolve_and_list, through transfer/listing.cpp, shared
// with `hfget ls`), plan against what is on disk (plan_download, count_plan), prepare the target
// (prepare_target), fetch the rest in parallel, each file verified and published as it completes
// (transfer::fetch_all), take the results (take_fetch_results), check the snapshot (verify_download), report.
// The data between them are plain values; where the files land is the options' Target, how the Hub is reached
// their HubConnection.
#include "hfget/download.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <thread>

#include "hfget/error.hpp"
#include "hub/hub_client.hpp"
#include "store/free_space.hpp"
#include "store/layout.hpp"
#include "store/repo_path.hpp"
#include "store/target_lock.hpp"
#include "transfer/copy_estimate.hpp"
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
  return hub::transport_settings(options.hub);
}

std::vector<PlannedFile> plan_against_disk(const std::vector<RemoteFile>& selected, const store::Layout& layout) {
  std::vector<PlannedFile> plan;
  plan.reserve(selected.size());
  for (const RemoteFile& file : selected) plan.push_back(PlannedFile{file, layout.is_complete(file)});
  return plan;
}

}  // namespace transfer

namespace {

using transfer::plan_against_disk;

// What the steps between listing and fetching carry: the pinned commit with its whole listing, what the
// selection keeps of it, and whether the repo is gated.
struct ListedSnapshot {
  Snapshot snapshot;
  std::vector<RemoteFile> selected;
  bool gated = false;
};

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
VerifyReport check_snapshot(const ListedSnapshot& listed, const store::Layout& layout, const DownloadOptions& options,
                            std::stop_token stop) {
  verify::SnapshotOnDisk on_disk;
  on_disk.root = layout.snapshot_path();
  on_disk.repo_type = options.repo.type;
  on_disk.commit = listed.snapshot.commit;
  on_disk.listing = listed.snapshot.files;
  on_disk.selected = std::set<std::string>();
  for (const RemoteFile& file : listed.selected) on_disk.selected->insert(file.path);
  on_disk.is_cache_snapshot = options.target().is_cache();
  verify::CheckSettings settings;
  settings.hash = false;
  settings.absent_upstream_fails = false;
  VerifyReport report;
  report.repo = options.repo.name;
  report.commit = listed.snapshot.commit;
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

store::TargetLock lock_target(const Target& target, const DownloadOptions& options, ProgressSink& progress,
                              const std::stop_token& stop) {
  return store::TargetLock::acquire(target.prepare_state_dir(), options.wait_for_lock, stop,
                                    [&](std::optional<long> pid) { progress.on_waiting_for_target(pid); });
}

// Resolve, list, validate, select: the same step `hfget ls` shows (transfer/listing.hpp). The revision is
// pinned first, so that a push during the download cannot mix two commits (a full commit id is asked for
// too: see pin_revision).
ListedSnapshot resolve_and_list(hub::HubClient& hub, const DownloadOptions& options) {
  ListedSnapshot listed;
  const hub::RevisionInfo revision = transfer::pin_revision(hub, options.repo, options.revision);
  listed.snapshot.commit = revision.commit;
  listed.gated = revision.gated;
  transfer::SelectedListing files =
      transfer::list_and_select(hub, options.repo, listed.snapshot.commit, options.selection);
  listed.snapshot.files = std::move(files.files);
  listed.selected = std::move(files.selected);
  return listed;
}

// A gated repo lists its files to anyone and refuses their contents: asked once, before anything is written
// and before any file, that is one line with the page to accept the licence on, not one failure per file.
// Only a file still to fetch is asked for: what is on disk already needs no access.
void check_access_to_files(hub::HubClient& hub, const DownloadOptions& options, const ListedSnapshot& listed) {
  const std::string& commit = listed.snapshot.commit;
  const std::vector<PlannedFile> plan = plan_against_disk(listed.selected, *options.target().layout(commit));
  const auto first = std::find_if(plan.begin(), plan.end(), [](const PlannedFile& p) { return !p.complete; });
  if (first != plan.end()) hub.check_file_access(options.repo, commit, first->file.path);
}

// Plan: each selected file against the disk (files already complete cost no request: a re-run does the
// listing and nothing else), then what --force-download or --verify change in that.
DownloadReport plan_download(const ListedSnapshot& listed, const store::Layout& layout, const DownloadOptions& options,
                             const std::stop_token& stop) {
  layout.check_paths(listed.selected);
  DownloadReport report;
  report.commit = listed.snapshot.commit;
  report.snapshot_path = layout.snapshot_path();
  report.files = plan_against_disk(listed.selected, layout);
  if (options.force_download) {
    plan_to_replace_everything(report.files);
  } else if (options.verify_present) {
    plan_to_repair(report.files, layout, report, stop);
  }
  return report;
}

// The plan's totals, in the report and in the summary the progress views show before the first byte.
DownloadPlanSummary count_plan(DownloadReport& report, const store::Layout& layout) {
  DownloadPlanSummary summary;
  summary.commit = report.commit;
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
      const std::uint64_t resumable = layout.partial_bytes(planned.file);
      summary.bytes_resumable += resumable;
      report.bytes_to_fetch += planned.file.size - resumable;
      ++summary.files_to_fetch;
    }
  }
  summary.bytes_selected = report.bytes_selected;
  return summary;
}

// Before the first byte: the space check, then the commit recorded (refs/, trees/), as the Python client
// does, so that an interrupted download is recognisable as incomplete rather than mistaken for the whole
// snapshot; files already complete are linked into it.
void prepare_target(const ListedSnapshot& listed, const DownloadReport& report, store::Layout& layout,
                    const DownloadOptions& options) {
  if (options.check_space) ensure_free_space(report, options.target().root());
  layout.prepare(listed.snapshot, listed.selected, options.revision);
  for (const PlannedFile& planned : report.files) {
    if (planned.complete) layout.link_existing(planned.file);
  }
}

// What the fetch did, into the report; when files failed, the worst failure is thrown.
void take_fetch_results(const transfer::FetchResults& fetched, DownloadReport& report,
                        std::chrono::steady_clock::time_point started) {
  // Copied chunks went through the incoming files like fetched ones, but not over the network.
  report.bytes_copied_locally = fetched.bytes_copied;
  report.bytes_received = fetched.bytes_received - std::min(fetched.bytes_received, fetched.bytes_copied);
  report.bytes_over_xet = fetched.bytes_over_xet - std::min(fetched.bytes_over_xet, fetched.bytes_copied);
  report.xorb_bytes_fetched = fetched.xorb_bytes_fetched;
  report.files_fetched = fetched.files_fetched;
  report.connection_times = fetched.connection_times;
  report.elapsed = std::chrono::steady_clock::now() - started;
  if (std::any_of(fetched.errors.begin(), fetched.errors.end(), [](const auto& e) { return e.has_value(); })) {
    throw_worst(fetched.errors, fetched.stop_cause);
  }
}

// Verify: the checks of `hfget verify` on the snapshot; a failure is thrown naming the files.
void verify_download(const ListedSnapshot& listed, const store::Layout& layout, const DownloadOptions& options,
                     DownloadReport& report, std::chrono::steady_clock::time_point started, std::stop_token stop) {
  report.checks = check_snapshot(listed, layout, options, std::move(stop));
  report.elapsed = std::chrono::steady_clock::now() - started;
  if (!report.checks.ok()) throw_failed_checks(report.checks, options);
}

// Under --max-speed the connections share the rate in turns (fewer of them under a low limit), and each
// must still average over --speed-limit and see a socket read of libcurl's (up to 512 KiB) well within
// --stall-timeout, or libcurl drops it as too slow and the download never ends.
void check_max_speed(const DownloadOptions& options) {
  const std::uint64_t rate = options.max_bytes_per_second;
  if (rate == 0) return;
  const auto stall_seconds = static_cast<std::uint64_t>(std::max<std::int64_t>(options.hub.stall_timeout.count(), 1));
  const std::uint64_t minimum = std::max<std::uint64_t>(2 * options.hub.speed_limit, (1 << 20) / stall_seconds);
  if (rate >= minimum) return;
  throw Error(ErrorCode::kUsage,
              fmt::format("--max-speed must be at least {} B/s with --speed-limit {} and --stall-timeout {} (twice "
                          "the speed limit, and 1 MiB per stall timeout), or 0 for no limit; got {} B/s",
                          minimum, options.hub.speed_limit, stall_seconds, rate));
}

}  // namespace

Target DownloadOptions::target() const {
  if (local_dir) return Target::in_local_dir(*local_dir, repo.type);
  return Target::in_cache(
      cache_dir, repo,
      symlinks_disabled ? Target::SnapshotFiles::kRealFiles : Target::SnapshotFiles::kSymlinksWhereSupported);
}

void check_chunk_bytes(std::uint64_t chunk_bytes) {
  if (chunk_bytes != 0 && chunk_bytes < kMinChunkBytes) {
    throw Error(ErrorCode::kUsage, "--chunk-size must be a size of at least 64KiB, e.g. 32MiB");
  }
}

void check_download_options(const DownloadOptions& options) {
  check_hub_connection(options.hub);
  check_chunk_bytes(options.chunk_bytes);
  if (options.max_workers < 1 || options.max_workers > 256) {
    throw Error(ErrorCode::kUsage, "--max-workers must be between 1 and 256");
  }
  if (options.connections && (*options.connections < 1 || *options.connections > 256)) {
    throw Error(ErrorCode::kUsage, "--connections must be between 1 and 256");
  }
  if (options.max_connections < 1 || options.max_connections > 256) {
    throw Error(ErrorCode::kUsage, "--max-connections must be between 1 and 256");
  }
  check_max_speed(options);
  if (options.revision.empty()) throw Error(ErrorCode::kUsage, "--revision must not be empty");
  // The revision names a file under refs/: it must be a safe relative path ("refs/pr/1" is fine).
  if (store::unsafe_path_reason(options.revision)) {
    throw Error(ErrorCode::kUsage, "invalid revision '" + options.revision + "'");
  }
  const std::string& endpoint = options.hub.endpoint;
  if (!options.offline && endpoint.rfind("http://", 0) != 0 && endpoint.rfind("https://", 0) != 0) {
    throw Error(ErrorCode::kUsage, "the endpoint must be an http:// or https:// URL: " + endpoint);
  }
}

std::optional<long> target_holder(const DownloadOptions& options) {
  return options.target().lock_holder();
}

std::filesystem::path check_download_source(const DownloadOptions& options, std::stop_token stop) {
  check_download_options(options);
  if (options.offline) return transfer::offline_snapshot(options).snapshot_path;
  // The client, its easy handle and its connections end with this scope. libcurl's threaded resolver runs
  // one thread per name lookup and joins it when the lookup is done; only a lookup abandoned half-way (a
  // timeout) leaves its thread to finish alone, and then the request failed and this throws.
  hub::HubClient hub(options.hub, stop);
  // The selection too: a named file that is not there, or patterns that keep nothing, fail now (exit 6).
  const ListedSnapshot listed = resolve_and_list(hub, options);
  if (listed.gated) check_access_to_files(hub, options, listed);
  return options.target().layout(listed.snapshot.commit)->snapshot_path();
}

// libcurl for every request; the stages are download_through's, below.
DownloadReport download(const DownloadOptions& options, ProgressSink& progress, std::stop_token stop) {
  const http::TransportSettings transport = transfer::transport_settings(options);
  return transfer::download_through(options, progress, std::move(stop),
                                    [transport] { return std::make_unique<http::EasyRequest>(transport); });
}

// The table of contents: resolve → list → validate → select → plan → fetch (each file verified and
// published as it completes) → verify the snapshot → report.
DownloadReport transfer::download_through(const DownloadOptions& options, ProgressSink& progress, std::stop_token stop,
                                          const http::TransportFactory& make_transport) {
  const auto started = std::chrono::steady_clock::now();
  check_download_options(options);
  if (options.offline) return transfer::offline_snapshot(options);

  const std::unique_ptr<http::Transport> hub_transport = make_transport();
  hub::HubClient hub(options.hub, *hub_transport, stop);
  const ListedSnapshot listed = resolve_and_list(hub, options);
  if (listed.gated && !options.dry_run) check_access_to_files(hub, options, listed);

  // One hfget per target: a second run queues here (or fails with --no-wait). Only now, once the repo is known
  // to exist, does anything touch the disk: a typo in a repo id leaves no folder in the cache.
  const Target target = options.target();
  std::optional<store::TargetLock> target_lock;
  if (!options.dry_run) target_lock.emplace(lock_target(target, options, progress, stop));

  const std::unique_ptr<store::Layout> layout = target.layout(listed.snapshot.commit);
  DownloadReport report = plan_download(listed, *layout, options, stop);
  const DownloadPlanSummary summary = count_plan(report, *layout);
  report.free_bytes = store::free_bytes(target.root());
  if (options.dry_run) {
    transfer::estimate_copies(report.files, options, listed.snapshot.commit, *layout, *hub_transport, make_transport,
                              progress, stop);
    return report;
  }
  prepare_target(listed, report, *layout, options);
  progress.on_plan(summary);

  // fetch → verify → publish, file by file: fetch_all fetches each file's ranges, IncomingFile::verify checks
  // its hash as the last byte arrives, and the publish step (publish_into the layout) makes it visible at once.
  const transfer::PublishStep publish = transfer::publish_into(*layout);
  const transfer::FetchResults fetched =
      transfer::fetch_all(report.files, options, listed.snapshot.commit, report.bytes_to_fetch, *layout, publish,
                          *hub_transport, make_transport, progress, stop);
  take_fetch_results(fetched, report, started);
  verify_download(listed, *layout, options, report, started, stop);
  return report;
}

}  // namespace hfget
