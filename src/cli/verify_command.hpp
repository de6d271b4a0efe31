// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "cli/run_context.hpp"

namespace hfget::cli {

/// Fills in `verify` (cli/command_table.hpp); the returned function runs it if it was the parsed command (else -1).
std::function<int(const RunContext&)> add_verify_command(CLI::App& app);

}  // namespace hfget::cli
