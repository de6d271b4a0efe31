// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cli/run_context.hpp"

namespace hfget::cli {

/// What a subcommand's add function hands back.
struct Command {
  /// Runs the command if it was the parsed one (else returns -1).
  std::function<int(const RunContext&)> run;
  /// What must happen while the process still has one thread (download's --detach forks): the exit code
  /// of a launcher that is done, nullopt to go on to run(). Empty for most commands.
  std::function<std::optional<int>()> before_threads;
};

/// One row of a command table (hfget's commands, or those under `cache`): --help lists the rows in order,
/// and "did you mean" suggests their names.
struct Subcommand {
  const char* name;
  const char* description;
  /// Adds the options of `command`, the subcommand made from this row's name and description.
  Command (*add)(CLI::App& command);
};

/// The add function of a command that needs nothing before threads start.
template <std::function<int(const RunContext&)> (*add)(CLI::App&)>
Command run_only(CLI::App& command) {
  return {add(command), {}};
}

/// A row once added to an app.
struct AddedCommand {
  const Subcommand* row = nullptr;
  CLI::App* app = nullptr;
  Command command;
};

/// Adds every row of `table` to `app`, in order.
std::vector<AddedCommand> add_subcommands(CLI::App& app, std::span<const Subcommand> table);

/// The command the command line named (nullptr when none was parsed).
const AddedCommand* parsed_command(const std::vector<AddedCommand>& added);

/// The rows' names, for "did you mean".
std::vector<std::string> command_names(std::span<const Subcommand> table);

/// hfget's own commands: download, verify, status, wait, ls, cache, rm, env.
std::span<const Subcommand> hfget_commands();

/// The hidden commands the build and the shell completion run: __man, __complete.
std::span<const Subcommand> internal_commands();

}  // namespace hfget::cli
