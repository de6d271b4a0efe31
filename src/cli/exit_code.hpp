// SPDX-License-Identifier: MIT
#pragma once

#include "hfget/error.hpp"

namespace hfget::cli {

inline constexpr int kExitSuccess = 0;
/// stdout's reader went away (`hfget ls | head`): what a shell reports for a writer SIGPIPE ended.
inline constexpr int kExitBrokenPipe = 141;
/// `hfget wait --timeout`: the download did not end in time (and goes on); the number timeout(1) uses.
inline constexpr int kExitWaitTimedOut = 124;

/// The only place that knows the numbers; docs/exit-codes.md lists the same table (a unit test compares them).
int exit_code_for(ErrorCode code) noexcept;

}  // namespace hfget::cli
