// SPDX-License-Identifier: MIT
// A script reads this instead of parsing the closing lines, so the document is complete on success and on
// failure alike, and is the only thing on stdout: `jq` gets one value whatever happened.
#include "cli/download_result.hpp"

#include <nlohmann/json.hpp>

#include "cli/verify_report.hpp"

namespace hfget::cli {
namespace {

nlohmann::json repo_fields(const DownloadOptions& options) {
  const Target target = options.target();
  return {{"repo_id", options.repo.name},
          {"repo_type", std::string(to_string(options.repo.type))},
          {"revision", options.revision},
          {"target", target.root().string()},
          {"layout", target.is_cache() ? "cache" : "local_dir"}};
}

std::string dumped(const nlohmann::json& document) {
  return document.dump(2, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace) + "\n";
}

// The same words the plan and the closing lines use.
const char* action_of(const PlannedFile& planned, bool dry_run) {
  if (planned.complete) return "present";
  if (dry_run) return planned.replace ? "replace" : "download";
  return planned.replace ? "replaced" : "downloaded";
}

}  // namespace

std::string render_download_result_json(const DownloadReport& report, const DownloadOptions& options,
                                        const std::string& path) {
  nlohmann::json files = nlohmann::json::array();
  std::uint64_t bytes_present = 0;
  for (const PlannedFile& planned : report.files) {
    nlohmann::json file = {
        {"path", planned.file.path}, {"size", planned.file.size}, {"action", action_of(planned, options.dry_run)}};
    if (planned.file.lfs_sha256) file["sha256"] = *planned.file.lfs_sha256;
    if (planned.file.xet_hash) file["xet_hash"] = *planned.file.xet_hash;
    if (options.dry_run && planned.bytes_to_copy > 0) file["bytes_to_copy"] = planned.bytes_to_copy;
    file["etag"] = planned.file.etag();
    files.push_back(std::move(file));
    bytes_present += planned.complete ? planned.file.size : 0;
  }
  nlohmann::json document = repo_fields(options);
  document["ok"] = true;
  document["exit_code"] = 0;
  document["dry_run"] = options.dry_run;
  document["path"] = path;
  document["snapshot_path"] = report.snapshot_path.string();
  document["commit"] = report.commit;
  document["files"] = std::move(files);
  document["summary"] = {
      {"files_selected", report.files.size()},
      {"files_downloaded", report.files_fetched},
      {"files_already_complete", report.files_already_complete},
      {"bytes_selected", report.bytes_selected},
      // Over the network in this run (retried ranges count twice), and what was on disk before it:
      // complete files, and the partial bytes a resume kept.
      {"bytes_downloaded", report.bytes_received},
      // Of those, the file bytes decoded from Xet, and what they came as (compressed chunks).
      {"bytes_over_xet", report.bytes_over_xet},
      {"bytes_over_bridge", report.bytes_received - std::min(report.bytes_received, report.bytes_over_xet)},
      {"xorb_bytes_fetched", report.xorb_bytes_fetched},
      {"bytes_copied_locally", report.bytes_copied_locally},
      {"bytes_already_complete", bytes_present},
      {"bytes_reused", report.bytes_selected - report.bytes_to_fetch},
      {"bytes_to_fetch", report.bytes_to_fetch},
      {"elapsed_seconds", report.elapsed.count()},
      // Where the connections' time went, summed over them (docs/cli.md).
      {"connection_seconds",
       {{"fetching", report.connection_times.fetching},
        {"receiving", report.connection_times.receiving()},
        {"writing", report.connection_times.writing},
        {"hashing", report.connection_times.hashing},
        {"waiting_for_file", report.connection_times.waiting_for_file},
        {"planning", report.connection_times.planning},
        {"finishing", report.connection_times.finishing},
        {"idle", report.connection_times.idle}}}};
  if (report.free_bytes) document["summary"]["free_bytes"] = *report.free_bytes;
  if (!options.dry_run) document["checks"] = verify_report_document(report.checks);
  return dumped(document);
}

std::string render_download_failure_json(const Error& error, int exit_code, const DownloadOptions* options) {
  nlohmann::json document = options != nullptr ? repo_fields(*options) : nlohmann::json::object();
  document["ok"] = false;
  document["exit_code"] = exit_code;
  document["error"] = {{"kind", std::string(to_string(error.code()))}, {"message", error.what()}};
  if (!error.file().empty()) document["error"]["file"] = error.file().string();
  return dumped(document);
}

}  // namespace hfget::cli
