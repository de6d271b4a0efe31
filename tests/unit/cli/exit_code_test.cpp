// SPDX-License-Identifier: MIT
#include "cli/exit_code.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace hfget::cli {
namespace {

// kInternal is the last enumerator; a code added after it would have to extend this.
std::vector<ErrorCode> all_error_codes() {
  std::vector<ErrorCode> codes;
  for (int i = 0; i <= static_cast<int>(ErrorCode::kInternal); ++i) codes.push_back(static_cast<ErrorCode>(i));
  return codes;
}

std::string trim(const std::string& text) {
  const std::size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const std::size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

struct Row {
  std::string code;
  std::string kind;
};

// The body rows of the markdown table in docs/exit-codes.md: `| 3 | repo_not_found | ... |`.
std::vector<Row> exit_code_table() {
  std::ifstream in(std::string(HFGET_SOURCE_DIR) + "/docs/exit-codes.md");
  EXPECT_TRUE(in) << "cannot read docs/exit-codes.md";
  std::vector<Row> rows;
  for (std::string line; std::getline(in, line);) {
    line = trim(line);
    if (line.empty() || line.front() != '|') continue;
    std::vector<std::string> cells;
    std::size_t start = 1;
    for (std::size_t bar = line.find('|', start); bar != std::string::npos; bar = line.find('|', start)) {
      cells.push_back(trim(line.substr(start, bar - start)));
      start = bar + 1;
    }
    if (cells.size() < 2 || cells[0].empty() || cells[0].find_first_not_of("0123456789") != std::string::npos) {
      continue;  // the header and the separator row
    }
    rows.push_back({cells[0], cells[1]});
  }
  return rows;
}

TEST(ExitCodeFor, EveryErrorCodeIsDocumentedWithItsNumberAndName) {
  const std::vector<Row> rows = exit_code_table();
  ASSERT_FALSE(rows.empty()) << "no table rows found in docs/exit-codes.md";
  for (const ErrorCode code : all_error_codes()) {
    const std::string number = std::to_string(exit_code_for(code));
    const std::string name(to_string(code));
    SCOPED_TRACE(name + " = " + number);
    bool found = false;
    for (const Row& row : rows) found = found || (row.code == number && row.kind == name);
    EXPECT_TRUE(found) << "docs/exit-codes.md has no row `| " << number << " | " << name << " | ... |`";
  }
}

TEST(ExitCodeFor, EveryDocumentedKindExists) {
  std::set<std::string> names = {"success", "broken_pipe", "timed_out"};  // outcomes that are not an ErrorCode
  for (const ErrorCode code : all_error_codes()) names.insert(std::string(to_string(code)));
  for (const Row& row : exit_code_table())
    EXPECT_EQ(names.count(row.kind), 1U) << "| " << row.code << " | " << row.kind;
}

TEST(ExitCodeFor, SuccessIsZeroAndDocumented) {
  EXPECT_EQ(kExitSuccess, 0);
  bool found = false;
  for (const Row& row : exit_code_table()) found = found || (row.code == "0" && row.kind == "success");
  EXPECT_TRUE(found);
}

TEST(ExitCodeFor, GivesEveryErrorCodeItsOwnNonZeroNumber) {
  std::set<int> seen;
  for (const ErrorCode code : all_error_codes()) {
    const int number = exit_code_for(code);
    EXPECT_NE(number, kExitSuccess) << to_string(code);
    EXPECT_GT(number, 0) << to_string(code);
    EXPECT_LT(number, 256) << to_string(code);
    EXPECT_TRUE(seen.insert(number).second) << to_string(code) << " shares " << number;
  }
}

TEST(ExitCodeFor, BrokenPipeIsTheShellsSigpipeStatusAndDocumented) {
  EXPECT_EQ(kExitBrokenPipe, 128 + 13);
  bool found = false;
  for (const Row& row : exit_code_table()) found = found || (row.code == "141" && row.kind == "broken_pipe");
  EXPECT_TRUE(found);
}

TEST(ExitCodeFor, WaitTimeoutIsTimeoutsNumberAndDocumented) {
  EXPECT_EQ(kExitWaitTimedOut, 124);
  const std::string number = std::to_string(kExitWaitTimedOut);
  bool found = false;
  for (const Row& row : exit_code_table()) found = found || (row.code == number && row.kind == "timed_out");
  EXPECT_TRUE(found) << "docs/exit-codes.md has no row `| 124 | timed_out | ... |`";
  for (const ErrorCode code : all_error_codes()) EXPECT_NE(exit_code_for(code), kExitWaitTimedOut) << to_string(code);
}

TEST(ExitCodeFor, InterruptedIsTheShellsSigintStatus) {
  EXPECT_EQ(exit_code_for(ErrorCode::kInterrupted), 128 + 2);
}

}  // namespace
}  // namespace hfget::cli
