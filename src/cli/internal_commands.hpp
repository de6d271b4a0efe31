// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "cli/run_context.hpp"

namespace hfget::cli {

/// `hfget __man [--output FILE]`: hfget(1) in roff (cli/man_page.hpp); the build runs it. Hidden from --help.
std::function<int(const RunContext&)> add_man_command(CLI::App& command);

/// `hfget __complete QUESTION...`: the words the shell completion offers (cli/completion.hpp). Hidden.
std::function<int(const RunContext&)> add_complete_command(CLI::App& command);

}  // namespace hfget::cli
