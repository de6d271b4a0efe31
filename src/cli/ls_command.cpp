// SPDX-License-Identifier: MIT
// `hfget ls`: the same two requests a download starts with (revision → commit, then the recursive tree at
// that commit) and the same selection rules, so what ls shows is exactly what `download` with the same flags
// would fetch. Paths are checked as for a download before they are printed: a hostile listing cannot put
// control characters on the terminal. Offline (HF_HUB_OFFLINE) it answers from the listing a download
// recorded in the cache (trees/<commit>.json, the whole commit), or fails at once: never a request.
#include "cli/ls_command.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/exit_code.hpp"
#include "cli/hub_options.hpp"
#include "cli/shard_sets.hpp"
#include "cli/target.hpp"
#include "hfget/environment.hpp"
#include "hfget/error.hpp"
#include "hub/hub_client.hpp"
#include "store/layout.hpp"
#include "store/repo_path.hpp"
#include "transfer/selection.hpp"
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

struct Listing {
  RepoId repo;
  std::string revision;
  std::string commit;
  std::size_t files_in_repo = 0;
  std::vector<RemoteFile> selected;
  std::vector<ShardSet> shard_sets;
  std::uint64_t total_bytes = 0;
  std::uint64_t lfs_bytes = 0;
  std::size_t lfs_files = 0;
  bool offline = false;  // read from the cache's record, not the Hub
};

// HF_HUB_OFFLINE: the commit refs/<revision> names and the listing trees/<commit>.json holds, as the Python
// client's offline mode reads them; what was never recorded is an error at once, as no request may be sent.
std::vector<RemoteFile> recorded_listing(Listing& listing, const HubEnvironment& env) {
  const std::filesystem::path cache_dir = cache_dir_from("", env);
  if (store::unsafe_path_reason(listing.revision)) {
    throw Error(ErrorCode::kUsage, "invalid revision '" + listing.revision + "'");
  }
  std::optional<std::string> commit = hub::is_commit_id(listing.revision)
                                          ? listing.revision
                                          : store::recorded_commit_in_cache(cache_dir, listing.repo, listing.revision);
  std::optional<std::vector<RemoteFile>> files;
  if (commit && hub::is_commit_id(*commit)) files = store::recorded_listing_in_cache(cache_dir, listing.repo, *commit);
  if (!files) {
    throw Error(ErrorCode::kNetwork,
                fmt::format("offline mode (HF_HUB_OFFLINE): no listing of revision '{}' of {} '{}' is recorded in the "
                            "cache {}; run it once with network access",
                            listing.revision, to_string(listing.repo.type), listing.repo.name, cache_dir.string()));
  }
  listing.commit = *commit;
  listing.offline = true;
  return std::move(*files);
}

std::vector<RemoteFile> listing_from_hub(Listing& listing, const HubAccess& access, const LsFlags& flags,
                                         const HubEnvironment& env, const RunContext& context) {
  if (flags.retries < 0 || flags.retries > 100) throw Error(ErrorCode::kUsage, "--retries must be between 0 and 100");
  hub::HubClientSettings settings;
  settings.endpoint = access.endpoint;
  settings.endpoint_origin = access.endpoint_origin;
  settings.token = access.token;
  settings.transport.ca_bundle = access.ca_bundle;
  settings.transport.ca_path = access.ca_path;
  settings.max_attempts = flags.retries + 1;
  settings.retry_base_delay = env.retry_base_delay;
  hub::HubClient hub(std::move(settings), context.stop);
  listing.commit = hub.resolve_commit(listing.repo, listing.revision);
  return hub.list_files(listing.repo, listing.commit);
}

Listing fetch_listing(const LsFlags& flags, const RunContext& context) {
  const HubEnvironment env = HubEnvironment::from_process_environment();
  Listing listing;
  const HubAccess access = hub_access(flags.hub, env);
  NamedRepo named = named_repo(flags.repo_id, flags.hub, flags.revision, flags.revision_given, access.endpoint);
  listing.repo = std::move(named.repo);
  listing.revision = std::move(named.revision);
  std::vector<RemoteFile> files =
      env.offline ? recorded_listing(listing, env) : listing_from_hub(listing, access, flags, env, context);
  store::validate_listing(files);
  listing.files_in_repo = files.size();
  listing.selected =
      transfer::select_files(files, FileSelection{{}, flags.include, flags.exclude, /*allow_empty=*/true});
  listing.shard_sets = find_shard_sets(files, listing.selected);
  for (const RemoteFile& file : listing.selected) {
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
  fmt::print("{} {} @ {} (revision {}{})\n", to_string(listing.repo.type), listing.repo.name, listing.commit,
             listing.revision, listing.offline ? "; offline: the listing recorded in the cache" : "");
  fmt::print("{:<56} {:>14} {:>22}  {:<3}  {}\n", "PATH", "BYTES", "SIZE", "LFS", "SHA256 (LFS) / GIT OID");
  for (const RemoteFile& file : listing.selected) {
    fmt::print("{:<56} {:>14} {:>22}  {:<3}  {}\n", file.path, file.size, util::format_bytes_both(file.size),
               file.is_lfs() ? "lfs" : "-", file.is_lfs() ? *file.lfs_sha256 : file.blob_id);
  }
  fmt::print("{} of {} file(s), {}; {} LFS file(s), {}\n", listing.selected.size(), listing.files_in_repo,
             util::format_bytes_both(listing.total_bytes), listing.lfs_files,
             util::format_bytes_both(listing.lfs_bytes));
  for (const ShardSet& set : listing.shard_sets) fmt::print("shards: {}\n", describe_shard_set(set));
}

void print_json(const Listing& listing) {
  nlohmann::json files = nlohmann::json::array();
  for (const RemoteFile& file : listing.selected) {
    nlohmann::json entry = {
        {"path", file.path}, {"size", file.size}, {"lfs", file.is_lfs()}, {"oid", file.blob_id}, {"sha256", nullptr}};
    if (file.is_lfs()) entry["sha256"] = *file.lfs_sha256;
    if (file.xet_hash) entry["xet_hash"] = *file.xet_hash;
    files.push_back(std::move(entry));
  }
  nlohmann::json shard_sets = nlohmann::json::array();
  for (const ShardSet& set : listing.shard_sets) {
    shard_sets.push_back({{"pattern", set.pattern.empty() ? nlohmann::json(nullptr) : nlohmann::json(set.pattern)},
                          {"index", set.index ? nlohmann::json(*set.index) : nlohmann::json(nullptr)},
                          {"expected", set.expected},
                          {"in_repo", set.in_repo},
                          {"selected", set.selected},
                          {"complete", !set.pattern.empty() && set.in_repo == set.expected}});
  }
  const nlohmann::json document = {
      {"repo_id", listing.repo.name},           {"repo_type", std::string(to_string(listing.repo.type))},
      {"revision", listing.revision},           {"commit", listing.commit},
      {"files_in_repo", listing.files_in_repo}, {"total_files", listing.selected.size()},
      {"total_bytes", listing.total_bytes},     {"lfs_files", listing.lfs_files},
      {"lfs_bytes", listing.lfs_bytes},         {"files", std::move(files)},
      {"shard_sets", std::move(shard_sets)},    {"offline", listing.offline}};
  fmt::print("{}\n", document.dump(2, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace));
}

}  // namespace

std::function<int(const RunContext&)> add_ls_command(CLI::App& app) {
  auto flags = std::make_shared<LsFlags>();
  CLI::App* command = app.add_subcommand("ls", "List a repo's files at one commit, without downloading");
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
