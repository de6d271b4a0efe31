// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "cli/run_context.hpp"

namespace hfget::cli {

// Each fills in the subcommand it is given, made from its row of a command table (cli/command_table.hpp).

/// `hfget cache ls|rm`: the HF cache's repos, revisions and sizes as huggingface_hub's scan_cache_dir sees
/// them, and removing a repo or a revision from it.
std::function<int(const RunContext&)> add_cache_command(CLI::App& cache);

/// `hfget cache ls [--cache-dir DIR] [--json]`, under the `cache` command.
std::function<int(const RunContext&)> add_cache_ls_command(CLI::App& ls);

/// `hfget cache rm REPO_ID [--revision R] [--dry-run] [--yes]`, under the `cache` command.
std::function<int(const RunContext&)> add_cache_rm_command(CLI::App& rm);

/// `hfget rm --local-dir DIR [--dry-run] [--yes]`: removes a --local-dir download hfget made.
std::function<int(const RunContext&)> add_rm_command(CLI::App& rm);

}  // namespace hfget::cli
