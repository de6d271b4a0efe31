// SPDX-License-Identifier: MIT
// The checks of `hfget verify`, in the order a reader asks the questions: is everything there, is every
// file the right size, are the bytes right, is the shard set whole, are the shards well formed, are config
// and tokenizer there. Each check adds one CheckResult and one FileProblem per bad file.
#include "verify/snapshot_checks.hpp"

#include <fmt/format.h>

#include "util/byte_size.hpp"
#include "verify/file_hashing.hpp"
#include "verify/inventory.hpp"
#include "verify/model_files.hpp"
#include "verify/shard_checks.hpp"

namespace hfget::verify {
namespace {

CheckResult check_completeness(const Inventory& inventory, VerifyReport& report) {
  std::size_t missing = 0;
  for (const ExpectedFile& file : inventory.expected) {
    if (!file.present) {
      ++missing;
      report.problems.push_back({file.path, "completeness", "missing"});
    } else if (!file.link_problem.empty()) {
      ++missing;
      report.problems.push_back({file.path, "completeness", file.link_problem});
    }
  }
  report.files_expected = inventory.expected.size();
  report.files_present = inventory.expected.size() - missing;
  report.has_listing = inventory.has_listing;
  for (const ExpectedFile& file : inventory.expected) {
    if (file.present) report.bytes_present += file.size_on_disk;
  }
  report.files_excluded = inventory.upstream.size() - inventory.selected.size();
  const std::string excluded =
      report.files_excluded > 0 ? fmt::format(" ({} excluded by the download's selection)", report.files_excluded) : "";
  if (!inventory.has_listing) {
    return {"completeness", CheckStatus::kSkip,
            fmt::format("no listing was recorded for this snapshot; {} file(s) on disk (use --online)",
                        inventory.expected.size())};
  }
  return {"completeness", missing == 0 ? CheckStatus::kPass : CheckStatus::kFail,
          fmt::format("{}/{} files present{}", report.files_present, report.files_expected, excluded)};
}

CheckResult check_sizes(const Inventory& inventory, VerifyReport& report) {
  if (!inventory.has_listing) return {"sizes", CheckStatus::kSkip, "no listing recorded"};
  std::size_t wrong = 0;
  for (const ExpectedFile& file : inventory.expected) {
    report.bytes_expected += file.remote->size;
    if (file.present && file.size_on_disk != file.remote->size) {
      ++wrong;
      report.problems.push_back(
          {file.path, "sizes",
           fmt::format(
               "size {} != {} bytes expected ({} too {})", file.size_on_disk, file.remote->size,
               util::format_bytes_both(file.size_on_disk < file.remote->size ? file.remote->size - file.size_on_disk
                                                                             : file.size_on_disk - file.remote->size),
               file.size_on_disk < file.remote->size ? "short" : "long")});
    }
  }
  const std::string total =
      fmt::format("{} bytes = {}", report.bytes_expected, util::format_bytes_both(report.bytes_expected));
  if (wrong > 0)
    return {"sizes", CheckStatus::kFail, fmt::format("{} file(s) of the wrong size; expected {}", wrong, total)};
  return {"sizes", CheckStatus::kPass, total};
}

CheckResult check_hashes(const SnapshotOnDisk& snapshot, const Inventory& inventory, const CheckSettings& settings,
                         VerifyReport& report, std::stop_token stop) {
  if (!settings.hash) return {"hashes", CheckStatus::kSkip, "skipped (--fast)"};
  if (!inventory.has_listing) return {"hashes", CheckStatus::kSkip, "no listing recorded"};
  std::vector<HashJob> jobs;
  for (const ExpectedFile& file : inventory.expected) {
    // A missing or wrong-sized file already failed; reading it would only cost time.
    if (file.present && file.size_on_disk == file.remote->size)
      jobs.push_back({snapshot.root / file.path, *file.remote});
  }
  if (settings.progress != nullptr) {
    settings.progress->files_to_hash = jobs.size();
    for (const HashJob& job : jobs) settings.progress->bytes_to_hash += job.expected.size;
  }
  const std::vector<HashOutcome> outcomes =
      hash_files(jobs, settings.jobs, report.bytes_hashed, std::move(stop), settings.progress);
  report.hashed = true;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const HashOutcome& outcome = outcomes[i];
    const std::string path = jobs[i].expected.path;
    if (!outcome.error.empty()) {
      ++bad;
      report.problems.push_back({path, "hashes", "cannot read: " + outcome.error});
    } else if (!outcome.matches) {
      ++bad;
      report.problems.push_back({path, "hashes",
                                 fmt::format("{} mismatch: expected {}, got {}", outcome.algorithm,
                                             jobs[i].expected.etag(), outcome.actual)});
    }
  }
  if (bad > 0) return {"hashes", CheckStatus::kFail, fmt::format("{} of {} file(s) do not match", bad, jobs.size())};
  return {"hashes", CheckStatus::kPass,
          fmt::format("{} file(s): sha256 (LFS) and git-sha1 match the listing", jobs.size())};
}

}  // namespace

void run_snapshot_checks(const SnapshotOnDisk& snapshot, const CheckSettings& settings, VerifyReport& report,
                         std::stop_token stop) {
  const Inventory inventory = take_inventory(snapshot);
  report.checks.push_back(check_completeness(inventory, report));
  report.checks.push_back(check_sizes(inventory, report));
  report.checks.push_back(check_hashes(snapshot, inventory, settings, report, std::move(stop)));
  const WeightsScan weights = scan_weights(snapshot.root, inventory);
  report.checks.push_back(check_shard_sets(inventory, weights, report));
  report.checks.push_back(check_safetensors_headers(weights, report));
  report.checks.push_back(check_config(snapshot, inventory, settings, report));
  report.checks.push_back(check_tokenizer(snapshot, inventory, settings, report));
}

}  // namespace hfget::verify
