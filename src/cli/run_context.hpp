// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <stop_token>

namespace hfget::cli {

/// What every command gets from main: the stop request SIGINT/SIGTERM raise, and the exit code for it.
struct RunContext {
  std::stop_token stop;
  std::function<int()> interrupted_exit_code;  // 130 after SIGINT, 143 after SIGTERM
};

}  // namespace hfget::cli
