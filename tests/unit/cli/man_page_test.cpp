// SPDX-License-Identifier: MIT
// hfget(1) is written from the command tree, so every command and flag --help shows must come out in it.
#include "cli/man_page.hpp"

#include <gtest/gtest.h>

#include "cli/command_table.hpp"

namespace hfget::cli {
namespace {

TEST(ManPage, EscapesWhatRoffWouldReadAsMarkup) {
  EXPECT_EQ(roff_escape("--include"), "\\-\\-include");
  EXPECT_EQ(roff_escape("a\\b"), "a\\eb");
  EXPECT_EQ(roff_escape(".hidden"), "\\&.hidden");
  EXPECT_EQ(roff_escape("'quoted'"), "\\&'quoted'");
}

TEST(ManPage, CarriesEveryVisibleCommandAndItsOptionsButNoHiddenOne) {
  CLI::App app{"hfget: test description"};
  add_subcommands(app, hfget_commands());
  CLI::App* hidden = app.add_subcommand("__secret", "not for users");
  hidden->group("");
  const std::string page = man_page(app, "9.9.9");
  EXPECT_EQ(page.rfind(".TH HFGET 1 \"\" \"hfget 9.9.9\"", 0), 0u);
  EXPECT_NE(page.find("hfget \\- test description"), std::string::npos);
  for (const Subcommand& row : hfget_commands()) {
    EXPECT_NE(page.find(std::string(".SS \"hfget ") + row.name + "\""), std::string::npos) << row.name;
  }
  EXPECT_NE(page.find(".SS \"hfget cache ls\""), std::string::npos);
  EXPECT_NE(page.find("\\fB\\-\\-include\\fR"), std::string::npos);
  EXPECT_EQ(page.find("__secret"), std::string::npos);
  // download's option group ("Accepted for `hf download` scripts") is part of download, not a command of its own.
  EXPECT_EQ(page.find(".SS \"hfget download \""), std::string::npos);
  EXPECT_NE(page.find("\\fB\\-\\-resume\\-download\\fR"), std::string::npos);
}

}  // namespace
}  // namespace hfget::cli
