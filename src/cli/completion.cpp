// SPDX-License-Identifier: MIT
// Shell completion asks the binary instead of carrying its own copy of the commands and flags, so that it knows
// exactly what this build's --help knows; the cache's repo ids are found from the cache folder the download itself
// would use (HubEnvironment), so a completed id is one `hfget download` will find offline.
#include "cli/completion.hpp"

#include <algorithm>
#include <span>
#include <system_error>

#include "hfget/environment.hpp"

namespace hfget::cli {
namespace {

constexpr std::size_t kMostRepos = 10000;  // a completion list past this helps nobody

struct RepoFolderPrefix {
  const char* folder;
  const char* spelled;
};
constexpr RepoFolderPrefix kRepoFolderPrefixes[] = {
    {"models--", ""}, {"datasets--", "datasets/"}, {"spaces--", "spaces/"}};

// "models--org--name" -> "org/name"; empty for a folder that is not a repo's.
std::string repo_id_of(const std::string& folder) {
  for (const RepoFolderPrefix& prefix : kRepoFolderPrefixes) {
    const std::string_view start = prefix.folder;
    if (!folder.starts_with(start) || folder.size() == start.size()) continue;
    std::string id = folder.substr(start.size());
    const std::size_t separator = id.find("--");
    if (separator != std::string::npos) id.replace(separator, 2, "/");
    return std::string(prefix.spelled) + id;
  }
  return {};
}

const CLI::App* named_subcommand(const CLI::App& app, const std::string& name) {
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (command->get_name() == name && !command->get_group().empty()) return command;
  }
  return nullptr;
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!command->get_name().empty() && !command->get_group().empty()) names.push_back(command->get_name());
  }
  return names;
}

std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_positional() || option->get_group().empty()) continue;
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  // An option group is an unnamed subcommand whose flags the command line takes as the command's own.
  for (const CLI::App* group : app.get_subcommands([](const CLI::App* sub) { return sub->get_name().empty(); })) {
    const std::vector<std::string> grouped = flag_names(*group);
    names.insert(names.end(), grouped.begin(), grouped.end());
  }
  return names;
}

// The command `words` name below the root, or nullptr.
const CLI::App* command_at(const CLI::App& root, std::span<const std::string> words) {
  const CLI::App* app = &root;
  for (const std::string& word : words) {
    app = named_subcommand(*app, word);
    if (app == nullptr) return nullptr;
  }
  return app;
}

std::vector<std::string> repo_words(const std::vector<std::string>& question) {
  if (question.size() == 3 && question[1] == "--cache-dir") return cached_repo_ids(question[2]);
  if (question.size() != 1) return {};
  return cached_repo_ids(HubEnvironment::from_process_environment().hub_cache);
}

}  // namespace

std::vector<std::string> cached_repo_ids(const std::filesystem::path& hub_cache) {
  std::vector<std::string> ids;
  std::error_code error;
  std::filesystem::directory_iterator entries(hub_cache, error);
  if (error) return ids;
  for (const std::filesystem::directory_entry& entry : entries) {
    if (ids.size() >= kMostRepos) break;
    if (!entry.is_directory(error)) continue;
    std::string id = repo_id_of(entry.path().filename().string());
    if (!id.empty()) ids.push_back(std::move(id));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<std::string> completion_words(const CLI::App& root, const std::vector<std::string>& question) {
  if (question.empty()) return {};
  const std::span<const std::string> path = std::span(question).subspan(1);
  if (question[0] == "commands" || question[0] == "flags") {
    const CLI::App* app = command_at(root, path);
    if (app == nullptr) return {};
    return question[0] == "commands" ? subcommand_names(*app) : flag_names(*app);
  }
  if (question[0] == "repos") {
    try {
      return repo_words(question);
    } catch (const std::exception&) {  // a malformed variable: no completion rather than an error in the prompt
      return {};
    }
  }
  return {};
}

}  // namespace hfget::cli
