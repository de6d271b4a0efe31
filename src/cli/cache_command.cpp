// SPDX-License-Identifier: MIT
#include <memory>
#include <vector>

#include "cli/cache_commands.hpp"
#include "cli/command_table.hpp"

namespace hfget::cli {
namespace {

constexpr Subcommand kCacheCommands[] = {
    {"ls", "List the repos and revisions in the HF cache, with sizes", run_only<add_cache_ls_command>},
    {"rm", "Remove a repo, or one revision of it, from the HF cache", run_only<add_cache_rm_command>},
};

}  // namespace

std::function<int(const RunContext&)> add_cache_command(CLI::App& cache) {
  cache.require_subcommand(1);
  const auto commands = std::make_shared<const std::vector<AddedCommand>>(add_subcommands(cache, kCacheCommands));
  return [commands](const RunContext& context) -> int {
    const AddedCommand* parsed = parsed_command(*commands);
    return parsed ? parsed->command.run(context) : -1;
  };
}

}  // namespace hfget::cli
