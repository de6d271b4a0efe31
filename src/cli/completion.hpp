// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <vector>

namespace hfget::cli {

/// The repo ids a cache holds, as a command line spells them: "org/name" for a model, "datasets/org/name" and
/// "spaces/org/name" for the others (parse_repo_reference reads those), from the cache's folder names
/// (models--org--name). Sorted; empty when the cache does not exist.
std::vector<std::string> cached_repo_ids(const std::filesystem::path& hub_cache);

/// The words the shell completion asks `hfget __complete` for (share/completion/hfget.bash):
///   commands [COMMAND]        the visible subcommands of hfget, or of COMMAND ("cache")
///   flags [COMMAND [SUB]]     the long and short flags of hfget, COMMAND or COMMAND SUB
///   repos [--cache-dir DIR]   cached_repo_ids of DIR, else of the cache HF_HUB_CACHE/HF_HOME name
/// One word a line; nothing for a question it does not know (a completion must never print an error).
std::vector<std::string> completion_words(const CLI::App& root, const std::vector<std::string>& question);

}  // namespace hfget::cli
