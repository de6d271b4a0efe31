// SPDX-License-Identifier: MIT
#include "cli/confirmation.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "hfget/download.hpp"
#include "hfget/error.hpp"

namespace hfget::cli {

bool confirmed(bool yes_flag, const std::string& question) {
  if (yes_flag) return true;
  if (::isatty(STDIN_FILENO) != 1) {
    throw Error(ErrorCode::kUsage, "stdin is not a terminal, so there is no one to confirm: pass --yes to remove");
  }
  std::fputs(fmt::format("{} [y/N] ", question).c_str(), stderr);
  std::fflush(stderr);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes" || answer == "YES" || answer == "Yes";
}

void refuse_while_downloading(const DownloadOptions& target, const std::string& what) {
  if (const std::optional<long> holder = target_holder(target)) {
    throw Error(ErrorCode::kBusy, fmt::format("a download (PID {}) is writing into {}; nothing was removed (wait for "
                                              "it with `hfget wait {}`, or stop it, then run this again)",
                                              *holder, what, what));
  }
}

}  // namespace hfget::cli
