// SPDX-License-Identifier: MIT
// The commands are rows of a table, so that their order in --help, the names "did you mean" knows and the
// dispatch in main cannot drift apart: adding a command is adding a row.
#include "cli/command_table.hpp"

#include "cli/cache_commands.hpp"
#include "cli/download_command.hpp"
#include "cli/env_command.hpp"
#include "cli/internal_commands.hpp"
#include "cli/ls_command.hpp"
#include "cli/status_command.hpp"
#include "cli/verify_command.hpp"

namespace hfget::cli {
namespace {

Command download(CLI::App& command) {
  DownloadCommand added = add_download_command(command);
  return {std::move(added.run), std::move(added.detach_if_requested)};
}

// In the order --help lists them: the download, then what checks and follows it, then the cache.
constexpr Subcommand kHfgetCommands[] = {
    {"download", "Download a repo (or some of its files) from the Hub", download},
    {"verify", "Check that a downloaded snapshot is complete and intact", run_only<add_verify_command>},
    {"status", "Show the state of a download", run_only<add_status_command>},
    {"wait", "Wait for a download to end; exit with its exit code", run_only<add_wait_command>},
    {"ls", "List a repo's files at one commit, without downloading", run_only<add_ls_command>},
    {"cache", "Inspect or clean the HF cache", run_only<add_cache_command>},
    {"rm", "Remove a --local-dir download hfget made (its files and metadata)", run_only<add_rm_command>},
    {"env", "Print what a bug report needs: version, endpoint, cache paths, proxies, token source",
     run_only<add_env_command>},
};

// Run by the build and the shell completion, not by users: main adds them hidden from --help.
constexpr Subcommand kInternalCommands[] = {
    {"__man", "Print the man page hfget(1), made from the --help of every command", run_only<add_man_command>},
    {"__complete", "Print the words shell completion offers", run_only<add_complete_command>},
};

}  // namespace

std::vector<AddedCommand> add_subcommands(CLI::App& app, std::span<const Subcommand> table) {
  std::vector<AddedCommand> added;
  for (const Subcommand& row : table) {
    CLI::App* command = app.add_subcommand(row.name, row.description);
    added.push_back({&row, command, row.add(*command)});
  }
  return added;
}

const AddedCommand* parsed_command(const std::vector<AddedCommand>& added) {
  for (const AddedCommand& command : added) {
    if (command.app->parsed()) return &command;
  }
  return nullptr;
}

std::vector<std::string> command_names(std::span<const Subcommand> table) {
  std::vector<std::string> names;
  for (const Subcommand& row : table) names.emplace_back(row.name);
  return names;
}

std::span<const Subcommand> hfget_commands() {
  return kHfgetCommands;
}

std::span<const Subcommand> internal_commands() {
  return kInternalCommands;
}

}  // namespace hfget::cli
