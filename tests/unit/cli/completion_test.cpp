// SPDX-License-Identifier: MIT
// Completion offers what the command tree and the cache hold, spelled as a command line takes it.
#include "cli/completion.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "cli/command_table.hpp"

namespace hfget::cli {
namespace {

using Words = std::vector<std::string>;

TEST(CachedRepoIds, SpellsEachCacheFolderAsARepoId) {
  const std::filesystem::path cache = std::filesystem::path(::testing::TempDir()) / "hfget-completion-cache";
  std::filesystem::remove_all(cache);
  for (const char* folder :
       {"models--org--name", "models--gpt2", "datasets--o--d", "spaces--o--s", ".locks", "models--"}) {
    std::filesystem::create_directories(cache / folder);
  }
  EXPECT_EQ(cached_repo_ids(cache), (Words{"datasets/o/d", "gpt2", "org/name", "spaces/o/s"}));
  EXPECT_EQ(cached_repo_ids(cache / "absent"), Words{});
  std::filesystem::remove_all(cache);
}

TEST(CompletionWords, CommandsAndFlagsComeFromTheCommandTree) {
  CLI::App app;
  add_subcommands(app, hfget_commands());
  app.add_subcommand("__hidden", "")->group("");
  EXPECT_EQ(completion_words(app, {"commands"}), command_names(hfget_commands()));
  EXPECT_EQ(completion_words(app, {"commands", "cache"}), (Words{"ls", "rm"}));
  const Words download_flags = completion_words(app, {"flags", "download"});
  EXPECT_NE(std::find(download_flags.begin(), download_flags.end(), "--include"), download_flags.end());
  EXPECT_NE(std::find(download_flags.begin(), download_flags.end(), "-h"), download_flags.end());
  EXPECT_NE(std::find(download_flags.begin(), download_flags.end(), "--resume-download"), download_flags.end())
      << "the flags of an option group are the command's";
  EXPECT_EQ(completion_words(app, {"flags", "nosuch"}), Words{});
  EXPECT_EQ(completion_words(app, {"what"}), Words{});
  EXPECT_EQ(completion_words(app, {}), Words{});
}

}  // namespace
}  // namespace hfget::cli
