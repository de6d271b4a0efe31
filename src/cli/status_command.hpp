// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "cli/run_context.hpp"

namespace hfget::cli {

/// `hfget status TARGET [--json]`: the state of the download into TARGET (running, done, failed,
/// interrupted, or died without saying so). Fills in `status`, the subcommand (cli/command_table.hpp).
std::function<int(const RunContext&)> add_status_command(CLI::App& status);

/// `hfget wait TARGET [--timeout S]`: blocks until that download ends, then exits with its exit code.
std::function<int(const RunContext&)> add_wait_command(CLI::App& wait);

}  // namespace hfget::cli
