// SPDX-License-Identifier: MIT
#include "cli/confirmation.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "hfget/error.hpp"

namespace hfget::cli {

bool confirmed(bool yes_flag, const std::string& question) {
  if (yes_flag) return true;
  if (::isatty(STDIN_FILENO) != 1) {
    throw Error(ErrorCode::kUsage,
                "stdin is not a terminal, so there is no one to confirm: pass --yes to remove");
  }
  std::fputs(fmt::format("{} [y/N] ", question).c_str(), stderr);
  std::fflush(stderr);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes" || answer == "YES" || answer == "Yes";
}

}  // namespace hfget::cli
