// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>

#include "cli/run_context.hpp"

namespace hfget::cli {

struct DownloadCommand {
  /// With --detach: forks the daemon. The launcher gets its exit code; the daemon (and any run without
  /// --detach) gets nullopt and goes on to run(). Must be called before any thread starts.
  std::function<std::optional<int>()> detach_if_requested;
  /// Runs the download if it was the parsed command (else returns -1).
  std::function<int(const RunContext&)> run;
};

DownloadCommand add_download_command(CLI::App& app);

}  // namespace hfget::cli
