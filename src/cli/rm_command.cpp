// SPDX-License-Identifier: MIT
// `hfget rm --local-dir DIR`: removes a --local-dir download, but only one hfget made (its record is under
// DIR/.cache/huggingface/hfget/), and only the files that record lists and whose metadata shows them
// unchanged since the download. Anything else stays, with the directory, and is listed.
#include <fmt/format.h>

#include "cli/cache_commands.hpp"
#include "cli/confirmation.hpp"
#include "cli/exit_code.hpp"
#include "hfget/cache.hpp"
#include "hfget/download.hpp"
#include "hfget/error.hpp"
#include "util/byte_size.hpp"
#include "util/env.hpp"
#include "util/printable.hpp"

namespace hfget::cli {
namespace {

// The paths come from hfget's record and from a listing of the directory: files anything may have named
// (an older hfget once accepted a listing's control characters). Shown escaped, one line each.
std::string shown(const std::string& path) {
  return util::printable(path, 4096);
}

struct RmFlags {
  std::string local_dir;
  bool dry_run = false;
  bool yes = false;
};

// Printed before anything is removed, and also when nothing will be (--dry-run, no answer, a refusal): "would"
// until the removal has happened.
void print_plan(const LocalDirRemovalPlan& plan, bool dry_run) {
  const char* prefix = dry_run ? "[dry-run] " : "";
  fmt::print("{}would remove {} file(s) hfget downloaded into {} ({}), and its metadata\n", prefix, plan.files.size(),
             plan.local_dir.string(), util::format_bytes_both(plan.bytes_freed));
  for (const std::string& path : plan.files) fmt::print("{}  {}\n", prefix, shown(path));
  for (const LocalDirRemovalPlan::Kept& kept : plan.kept) {
    fmt::print("{}would keep {}: {}\n", prefix, shown(kept.path), kept.reason);
  }
}

int run_rm(const RmFlags& flags) {
  DownloadOptions target;  // only to name the local dir's lock
  target.local_dir = std::filesystem::absolute(util::expand_user_and_vars(flags.local_dir));
  const LocalDirRemovalPlan plan = plan_local_dir_removal(*target.local_dir);
  print_plan(plan, flags.dry_run);
  std::fflush(stdout);
  refuse_while_downloading(target, target.local_dir->string());
  if (flags.dry_run) return kExitSuccess;
  if (!confirmed(flags.yes, "Remove them?")) {
    std::fputs("hfget: nothing removed\n", stderr);
    return kExitSuccess;
  }
  const LocalDirRemoval removal = remove_local_dir_download(*target.local_dir);
  fmt::print("removed {} file(s); freed {}\n", removal.plan.files.size(),
             util::format_bytes_both(removal.plan.bytes_freed));
  if (removal.directory_removed) {
    fmt::print("removed the directory {}\n", target.local_dir->string());
  } else {
    fmt::print("kept the directory {}: {} file(s) hfget did not write are still in it:\n", target.local_dir->string(),
               removal.left.size());
    for (const std::string& path : removal.left) fmt::print("  {}\n", shown(path));
  }
  return kExitSuccess;
}

}  // namespace

std::function<int(const RunContext&)> add_rm_command(CLI::App& rm) {
  auto flags = std::make_shared<RmFlags>();
  CLI::App* command = &rm;
  command->add_option("--local-dir", flags->local_dir, "The directory a `hfget download --local-dir` wrote")
      ->required();
  command->add_flag("--dry-run", flags->dry_run, "Show what would be removed, remove nothing");
  command->add_flag("-y,--yes", flags->yes, "Do not ask for confirmation (needed when stdin is not a terminal)");
  return [command, flags](const RunContext&) -> int { return command->parsed() ? run_rm(*flags) : -1; };
}

}  // namespace hfget::cli
