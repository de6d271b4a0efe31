// SPDX-License-Identifier: MIT
// `hfget cache ls`: every repo of the HF cache with its revisions, refs, file counts and size on disk, as
// huggingface_hub's scan_cache_dir computes them (a blob shared by revisions counts once). Entries that scan
// would reject as corrupted are warned about on stderr, one line each, and left out of the table.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/cache_commands.hpp"
#include "cli/exit_code.hpp"
#include "cli/target.hpp"
#include "hfget/cache.hpp"
#include "hfget/environment.hpp"
#include "util/byte_size.hpp"

namespace hfget::cli {
namespace {

struct CacheLsFlags {
  std::string cache_dir;
  bool json = false;
};

std::string utc_time(std::int64_t unix_seconds) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(static_cast<std::time_t>(unix_seconds)));
}

std::string refs_text(const std::vector<std::string>& refs) {
  return refs.empty() ? "-" : fmt::format("{}", fmt::join(refs, ", "));
}

// A download not finished: its size on disk is not the revision's size, and `hfget download` resumes it.
std::string incomplete_text(const CachedRevision& revision) {
  if (!revision.incomplete()) return "";
  return fmt::format("  INCOMPLETE: {} file(s) missing, {} partial file(s) (run the download again to resume)",
                     revision.files_missing, revision.partial_files);
}

void print_text(const CacheScan& scan) {
  if (!scan.exists) {
    std::fputs(fmt::format("hfget: no cache at {}\n", scan.cache_dir.string()).c_str(), stderr);
    return;
  }
  fmt::print("cache {}: {} repo(s), {}\n", scan.cache_dir.string(), scan.repos.size(),
             util::format_bytes_both(scan.size_on_disk));
  if (!scan.repos.empty()) {
    fmt::print("{:<8} {:<48} {:>9} {:>6} {:>22}  {:<20}  {}\n", "TYPE", "REPO ID", "REVISIONS", "FILES", "SIZE ON DISK",
               "LAST MODIFIED", "REFS");
  }
  for (const CachedRepo& repo : scan.repos) {
    std::vector<std::string> refs;
    for (const CachedRevision& revision : repo.revisions)
      refs.insert(refs.end(), revision.refs.begin(), revision.refs.end());
    fmt::print("{:<8} {:<48} {:>9} {:>6} {:>22}  {:<20}  {}\n", to_string(repo.type), repo.repo_id,
               repo.revisions.size(), repo.file_count, util::format_bytes_both(repo.size_on_disk),
               utc_time(repo.last_modified_unix), refs_text(refs));
    for (const CachedRevision& revision : repo.revisions) {
      fmt::print("  {} {:>6} file(s) {:>22}  {:<20}  {}{}\n", revision.commit, revision.file_count,
                 util::format_bytes_both(revision.size_on_disk), utc_time(revision.last_modified_unix),
                 refs_text(revision.refs), incomplete_text(revision));
    }
  }
}

void print_json(const CacheScan& scan) {
  nlohmann::json repos = nlohmann::json::array();
  for (const CachedRepo& repo : scan.repos) {
    nlohmann::json revisions = nlohmann::json::array();
    for (const CachedRevision& revision : repo.revisions) {
      revisions.push_back({{"commit", revision.commit},
                           {"refs", revision.refs},
                           {"files", revision.file_count},
                           {"size_on_disk", revision.size_on_disk},
                           {"last_modified", utc_time(revision.last_modified_unix)},
                           {"incomplete", revision.incomplete()},
                           {"files_missing", revision.files_missing},
                           {"partial_files", revision.partial_files},
                           {"snapshot_path", (repo.path / "snapshots" / revision.commit).string()}});
    }
    repos.push_back({{"repo_type", std::string(to_string(repo.type))},
                     {"repo_id", repo.repo_id},
                     {"path", repo.path.string()},
                     {"files", repo.file_count},
                     {"size_on_disk", repo.size_on_disk},
                     {"last_modified", utc_time(repo.last_modified_unix)},
                     {"last_accessed", utc_time(repo.last_accessed_unix)},
                     {"revisions", std::move(revisions)}});
  }
  nlohmann::json warnings = nlohmann::json::array();
  for (const CacheWarning& warning : scan.warnings) {
    warnings.push_back({{"path", warning.path.string()}, {"message", warning.message}});
  }
  const nlohmann::json document = {{"cache_dir", scan.cache_dir.string()},
                                   {"exists", scan.exists},
                                   {"size_on_disk", scan.size_on_disk},
                                   {"repos", std::move(repos)},
                                   {"warnings", std::move(warnings)}};
  fmt::print("{}\n", document.dump(2, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace));
}

}  // namespace

std::function<int(const RunContext&)> add_cache_ls_command(CLI::App& ls) {
  auto flags = std::make_shared<CacheLsFlags>();
  CLI::App* command = &ls;
  command->add_option("--cache-dir", flags->cache_dir, "HF cache directory (default: HF_HUB_CACHE)");
  command->add_flag("--json", flags->json, "Print one JSON document on stdout");
  return [command, flags](const RunContext&) -> int {
    if (!command->parsed()) return -1;
    const CacheScan scan = scan_cache(cache_dir_from(flags->cache_dir, HubEnvironment::from_process_environment()));
    flags->json ? print_json(scan) : print_text(scan);
    std::fflush(stdout);
    for (const CacheWarning& warning : scan.warnings) {
      std::fputs(fmt::format("hfget: warning: {} (left out; huggingface_hub's scan_cache_dir rejects it too)\n",
                             warning.message)
                     .c_str(),
                 stderr);
    }
    return kExitSuccess;
  };
}

}  // namespace hfget::cli
