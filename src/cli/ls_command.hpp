// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "cli/run_context.hpp"

namespace hfget::cli {

/// `hfget ls REPO_ID`: the files of a repo at one pinned commit, with sizes, hashes and shard sets, without
/// downloading anything.
std::function<int(const RunContext&)> add_ls_command(CLI::App& app);

}  // namespace hfget::cli
