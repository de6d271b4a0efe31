// SPDX-License-Identifier: MIT
#include <vector>

#include "cli/cache_commands.hpp"

namespace hfget::cli {

std::function<int(const RunContext&)> add_cache_command(CLI::App& app) {
  CLI::App* cache = app.add_subcommand("cache", "Inspect or clean the HF cache");
  cache->require_subcommand(1);
  const std::vector<std::function<int(const RunContext&)>> commands{add_cache_ls_command(*cache),
                                                                    add_cache_rm_command(*cache)};
  return [commands](const RunContext& context) -> int {
    for (const auto& command : commands) {
      if (const int code = command(context); code >= 0) return code;
    }
    return -1;
  };
}

}  // namespace hfget::cli
