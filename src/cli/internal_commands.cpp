// SPDX-License-Identifier: MIT
// The commands hfget runs for its own packaging, not for a user: the build asks the binary for its man page and
// the shell completion asks it for words, so that neither keeps a copy of the command line to drift. They read the
// whole command tree, which is the parent of their own subcommand.
#include "cli/internal_commands.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/completion.hpp"
#include "cli/exit_code.hpp"
#include "cli/man_page.hpp"
#include "cli/version.hpp"
#include "hfget/error.hpp"
#include "util/atomic_file.hpp"

namespace hfget::cli {

std::function<int(const RunContext&)> add_man_command(CLI::App& command) {
  auto output = std::make_shared<std::string>();
  command.add_option("--output", *output, "Write the page to FILE instead of stdout");
  return [&command, output](const RunContext&) -> int {
    if (!command.parsed()) return -1;
    const std::string page = man_page(*command.get_parent(), version_info().version);
    if (output->empty()) {
      std::fputs(page.c_str(), stdout);
    } else {
      util::write_file_atomically(*output, page);
    }
    return kExitSuccess;
  };
}

std::function<int(const RunContext&)> add_complete_command(CLI::App& command) {
  struct Question {
    std::vector<std::string> words;
    std::string cache_dir;
  };
  auto question = std::make_shared<Question>();
  command.add_option("words", question->words, "commands [COMMAND] | flags [COMMAND [SUB]] | repos");
  command.add_option("--cache-dir", question->cache_dir, "The cache whose repos to list");
  return [&command, question](const RunContext&) -> int {
    if (!command.parsed()) return -1;
    std::vector<std::string> words = question->words;
    if (!question->cache_dir.empty()) words.insert(words.end(), {"--cache-dir", question->cache_dir});
    for (const std::string& word : completion_words(*command.get_parent(), words)) {
      std::fputs((word + "\n").c_str(), stdout);
    }
    return kExitSuccess;
  };
}

}  // namespace hfget::cli
