// SPDX-License-Identifier: MIT
// `hfget cache rm REPO_ID [--revision R]`: shows what would go (revisions, refs, blobs, bytes), asks unless
// --yes, refuses while a download holds the repo, then removes under the repo's download lock. Everything
// removed is inside <cache>/<repo folder>.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/cache_commands.hpp"
#include "cli/confirmation.hpp"
#include "cli/exit_code.hpp"
#include "cli/hub_options.hpp"
#include "cli/target.hpp"
#include "hfget/cache.hpp"
#include "hfget/download.hpp"
#include "hfget/environment.hpp"
#include "hfget/error.hpp"
#include "util/byte_size.hpp"

namespace hfget::cli {
namespace {

struct CacheRmFlags {
  std::string repo_id;
  std::string repo_type = "model";
  std::string revision;
  std::string cache_dir;
  bool dry_run = false;
  bool yes = false;
};

// The plan is printed before anything is removed, and also when nothing will be (--dry-run, no answer, a
// refusal): it says "would" until the removal has happened, and the line after the removal says what was.
void print_plan(const CacheRemovalPlan& plan, const std::filesystem::path& cache_dir, bool dry_run) {
  const char* prefix = dry_run ? "[dry-run] " : "";
  if (plan.whole_repo) {
    fmt::print("{}would remove {} (the whole repo: {} revision(s){})\n", prefix, plan.repo_path.string(),
               plan.commits.size(), plan.commits.empty() ? "" : fmt::format(": {}", fmt::join(plan.commits, ", ")));
  } else {
    fmt::print("{}would remove revision {} of {}\n", prefix, plan.commits.front(), plan.repo_path.string());
    for (const std::filesystem::path& path : plan.paths) {
      fmt::print("{}  {}\n", prefix, path.lexically_relative(cache_dir).string());
    }
  }
  fmt::print("{}would remove refs: {}; blobs: {}; would free {}\n", prefix,
             plan.refs.empty() ? "none" : fmt::format("{}", fmt::join(plan.refs, ", ")), plan.blob_count,
             util::format_bytes_both(plan.bytes_freed));
}

int run_cache_rm(const CacheRmFlags& flags) {
  const HubEnvironment env = HubEnvironment::from_process_environment();
  DownloadOptions target;  // only to name the repo's lock
  target.cache_dir = cache_dir_from(flags.cache_dir, env);
  target.repo = RepoId::parse(flags.repo_id, repo_type_from(flags.repo_type));
  const std::optional<std::string> revision =
      flags.revision.empty() ? std::nullopt : std::optional<std::string>(flags.revision);
  const CacheRemovalPlan plan = plan_cache_removal(target.cache_dir, target.repo, revision);
  print_plan(plan, target.cache_dir, flags.dry_run);
  std::fflush(stdout);
  refuse_while_downloading(target, target.repo.name);
  if (flags.dry_run) return kExitSuccess;
  if (!confirmed(flags.yes, "Remove it?")) {
    std::fputs("hfget: nothing removed\n", stderr);
    return kExitSuccess;
  }
  const CacheRemovalPlan done = remove_from_cache(target.cache_dir, target.repo, revision);
  fmt::print("removed {}; freed {}\n",
             done.whole_repo ? fmt::format("{} {}", to_string(target.repo.type), target.repo.name)
                             : fmt::format("revision {} of {}", done.commits.front(), target.repo.name),
             util::format_bytes_both(done.bytes_freed));
  return kExitSuccess;
}

}  // namespace

std::function<int(const RunContext&)> add_cache_rm_command(CLI::App& rm) {
  auto flags = std::make_shared<CacheRmFlags>();
  CLI::App* command = &rm;
  command->add_option("repo_id", flags->repo_id, "Repo id, e.g. moonshotai/Kimi-K2.5")->required();
  add_repo_type_option(command, flags->repo_type);
  command->add_option("--revision", flags->revision,
                      "Only this revision (a commit in the cache, or a ref such as main); default: the whole repo");
  command->add_option("--cache-dir", flags->cache_dir, "HF cache directory (default: HF_HUB_CACHE)");
  command->add_flag("--dry-run", flags->dry_run, "Show what would be removed, remove nothing");
  command->add_flag("-y,--yes", flags->yes, "Do not ask for confirmation (needed when stdin is not a terminal)");
  return [command, flags](const RunContext&) -> int { return command->parsed() ? run_cache_rm(*flags) : -1; };
}

}  // namespace hfget::cli
