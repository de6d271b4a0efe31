// SPDX-License-Identifier: MIT
// The command table is the one list of hfget's commands: --help, "did you mean" and the dispatch read it.
#include "cli/command_table.hpp"

#include <gtest/gtest.h>

#include "cli/command_suggestion.hpp"

namespace hfget::cli {
namespace {

TEST(CommandTable, ListsHfgetsCommandsInHelpOrder) {
  EXPECT_EQ(command_names(hfget_commands()),
            (std::vector<std::string>{"download", "verify", "status", "wait", "ls", "cache", "rm", "env"}));
}

TEST(CommandTable, EveryRowBecomesASubcommandWithItsNameAndDescription) {
  CLI::App app;
  const std::vector<AddedCommand> added = add_subcommands(app, hfget_commands());
  const std::vector<CLI::App*> subcommands = app.get_subcommands([](CLI::App*) { return true; });
  ASSERT_EQ(added.size(), hfget_commands().size());
  ASSERT_EQ(subcommands.size(), added.size());
  for (std::size_t i = 0; i < added.size(); ++i) {
    EXPECT_EQ(added[i].row, &hfget_commands()[i]);
    EXPECT_EQ(added[i].app, subcommands[i]);
    EXPECT_EQ(subcommands[i]->get_name(), hfget_commands()[i].name);
    EXPECT_EQ(subcommands[i]->get_description(), hfget_commands()[i].description);
    EXPECT_TRUE(added[i].command.run) << hfget_commands()[i].name;
  }
  EXPECT_TRUE(added.front().command.before_threads) << "download detaches before threads start";
  for (std::size_t i = 1; i < added.size(); ++i) EXPECT_FALSE(added[i].command.before_threads) << added[i].row->name;
}

TEST(CommandTable, TheParsedCommandIsTheOneTheCommandLineNamed) {
  CLI::App app;
  const std::vector<AddedCommand> added = add_subcommands(app, hfget_commands());
  EXPECT_EQ(parsed_command(added), nullptr) << "before parsing";
  app.parse(std::vector<std::string>{"/models/x", "status"});  // CLI11 takes the arguments in reverse
  const AddedCommand* parsed = parsed_command(added);
  ASSERT_NE(parsed, nullptr);
  EXPECT_STREQ(parsed->row->name, "status");
}

TEST(CommandTable, DidYouMeanKnowsEveryCommandOfTheTable) {
  const std::vector<std::string> names = command_names(hfget_commands());
  EXPECT_EQ(closest_match("downlaod", names), "download");
  EXPECT_EQ(closest_match("stauts", names), "status");
  EXPECT_EQ(closest_match("cahce", names), "cache");
}

}  // namespace
}  // namespace hfget::cli
