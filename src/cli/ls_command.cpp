// SPDX-License-Identifier: MIT
// `hfget ls`: the library's list_repo (hfget/listing.hpp), which is download's own listing step: the same two
// requests a download starts with (revision → commit, then the recursive tree at that commit) and the same
// selection rules, so what ls shows is exactly what `download` with the same flags would fetch. Paths are checked as
// for a download before they are printed: a hostile listing cannot put control characters on the terminal. Offline
// (HF_HUB_OFFLINE) it answers from the listing a download recorded in the cache (trees/<commit>.json, the whole
// commit), or fails at once: never a request.
#include "cli/ls_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/exit_code.hpp"
#include "cli/hub_options.hpp"
#include "cli/target.hpp"
#include "hfget/environment.hpp"
#include "hfget/error.hpp"
#include "hfget/listing.hpp"
#include "util/byte_size.hpp"

namespace hfget::cli {
namespace {

struct LsFlags {
  std::string repo_id;
  std::string revision = "main";
  bool revision_given = false;
  HubFlags hub;
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  int retries = 8;
  bool json = false;
};

// What ls prints: the library's listing, with the names the user typed and the totals of the selection.
struct Listing {
  RepoId repo;
  std::string revision;
  RepoListing listed;
  std::uint64_t total_bytes = 0;
  std::uint64_t lfs_bytes = 0;
  std::size_t lfs_files = 0;
};

ListOptions list_options(const LsFlags& flags, const HubEnvironment& env) {
  ListOptions options;
  options.hub = hub_connection(flags.hub, env);
  NamedRepo named = named_repo(flags.repo_id, flags.hub, flags.revision, flags.revision_given, options.hub.endpoint);
  options.repo = std::move(named.repo);
  options.revision = std::move(named.revision);
  options.selection = FileSelection{{}, flags.include, flags.exclude, /*allow_empty=*/true};
  if (env.offline) options.cache_dir = cache_dir_from("", env);
  options.offline = env.offline;
  if (!options.offline) options.hub.max_attempts = max_attempts_for_retries(flags.retries);  // offline: no request
  return options;
}

Listing fetch_listing(const LsFlags& flags, const RunContext& context) {
  const HubEnvironment env = HubEnvironment::from_process_environment();
  const ListOptions options = list_options(flags, env);
  Listing listing{options.repo, options.revision, list_repo(options, context.stop)};
  for (const RemoteFile& file : listing.listed.selected) {
    listing.total_bytes += file.size;
    listing.lfs_bytes += file.is_lfs() ? file.size : 0;
    listing.lfs_files += file.is_lfs() ? 1u : 0u;
  }
  return listing;
}

std::string describe_shard_set(const ShardSet& set) {
  if (set.pattern.empty()) return fmt::format("{}: no shard named *-NNNNN-of-NNNNN after it", *set.index);
  std::string line = fmt::format("{}: {}/{} shards in the repo", set.pattern, set.in_repo, set.expected);
  if (set.selected != set.in_repo) line += fmt::format(", {} selected", set.selected);
  if (set.index) line += fmt::format(" (index {})", *set.index);
  if (set.in_repo != set.expected) line += " — INCOMPLETE";
  return line;
}

void print_text(const Listing& listing) {
  fmt::print("{} {} @ {} (revision {}{})\n", to_string(listing.repo.type), listing.repo.name, listing.listed.commit,
             listing.revision, listing.listed.offline ? "; offline: the listing recorded in the cache" : "");
  // A repo stored in Xet gets a column for the xet hashes (what the CAS names each file by); others keep the
  // table they always had.
  const bool xet = std::any_of(listing.listed.selected.begin(), listing.listed.selected.end(),
                               [](const RemoteFile& file) { return file.xet_hash.has_value(); });
  fmt::print("{:<56} {:>14} {:>22}  {:<3}  {}{}\n", "PATH", "BYTES", "SIZE", "LFS", "SHA256 (LFS) / GIT OID",
             xet ? fmt::format("{:<{}}  XET HASH", "", 64 - 22) : "");
  for (const RemoteFile& file : listing.listed.selected) {
    fmt::print("{:<56} {:>14} {:>22}  {:<3}  {}{}\n", file.path, file.size, util::format_bytes_both(file.size),
               file.is_lfs() ? "lfs" : "-", file.is_lfs() ? *file.lfs_sha256 : file.blob_id,
               file.xet_hash ? fmt::format("{:<{}}  {}", "", file.is_lfs() ? 0 : 24, *file.xet_hash) : "");
  }
  fmt::print("{} of {} file(s), {}; {} LFS file(s), {}\n", listing.listed.selected.size(), listing.listed.files.size(),
             util::format_bytes_both(listing.total_bytes), listing.lfs_files,
             util::format_bytes_both(listing.lfs_bytes));
  for (const ShardSet& set : listing.listed.shard_sets) fmt::print("shards: {}\n", describe_shard_set(set));
}

void print_json(const Listing& listing) {
  nlohmann::json files = nlohmann::json::array();
  for (const RemoteFile& file : listing.listed.selected) {
    nlohmann::json entry = {
        {"path", file.path}, {"size", file.size}, {"lfs", file.is_lfs()}, {"oid", file.blob_id}, {"sha256", nullptr}};
    if (file.is_lfs()) entry["sha256"] = *file.lfs_sha256;
    if (file.xet_hash) entry["xet_hash"] = *file.xet_hash;
    files.push_back(std::move(entry));
  }
  nlohmann::json shard_sets = nlohmann::json::array();
  for (const ShardSet& set : listing.listed.shard_sets) {
    shard_sets.push_back({{"pattern", set.pattern.empty() ? nlohmann::json(nullptr) : nlohmann::json(set.pattern)},
                          {"index", set.index ? nlohmann::json(*set.index) : nlohmann::json(nullptr)},
                          {"expected", set.expected},
                          {"in_repo", set.in_repo},
                          {"selected", set.selected},
                          {"complete", !set.pattern.empty() && set.in_repo == set.expected}});
  }
  const nlohmann::json document = {{"repo_id", listing.repo.name},
                                   {"repo_type", std::string(to_string(listing.repo.type))},
                                   {"revision", listing.revision},
                                   {"commit", listing.listed.commit},
                                   {"files_in_repo", listing.listed.files.size()},
                                   {"total_files", listing.listed.selected.size()},
                                   {"total_bytes", listing.total_bytes},
                                   {"lfs_files", listing.lfs_files},
                                   {"lfs_bytes", listing.lfs_bytes},
                                   {"files", std::move(files)},
                                   {"shard_sets", std::move(shard_sets)},
                                   {"offline", listing.listed.offline}};
  fmt::print("{}\n", document.dump(2, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace));
}

}  // namespace

std::function<int(const RunContext&)> add_ls_command(CLI::App& app) {
  auto flags = std::make_shared<LsFlags>();
  CLI::App* command = &app;  // the subcommand, made from its row in cli/command_table.cpp
  command->add_option("repo_id", flags->repo_id, "Repo id, e.g. moonshotai/Kimi-K2.5")->required();
  add_revision_option(command, flags->revision, flags->revision_given);
  add_hub_options(command, flags->hub);
  add_selection_options(command, flags->include, flags->exclude);
  command->add_option("--retries", flags->retries, "Retries per Hub request")->capture_default_str();
  command->add_flag("--json", flags->json, "Print one JSON document on stdout");
  return [command, flags](const RunContext& context) -> int {
    if (!command->parsed()) return -1;
    const Listing listing = fetch_listing(*flags, context);
    flags->json ? print_json(listing) : print_text(listing);
    std::fflush(stdout);
    return kExitSuccess;
  };
}

}  // namespace hfget::cli
