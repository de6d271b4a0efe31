// SPDX-License-Identifier: MIT
#include "cli/exit_code.hpp"

namespace hfget::cli {

int exit_code_for(ErrorCode code) noexcept {
  switch (code) {  // no default: -Wswitch flags a new code without a number
    case ErrorCode::kInternal: return 1;
    case ErrorCode::kUsage: return 2;
    case ErrorCode::kRepoNotFound: return 3;
    case ErrorCode::kAccessDenied: return 4;
    case ErrorCode::kRevisionNotFound: return 5;
    case ErrorCode::kFileNotFound: return 6;
    case ErrorCode::kNetwork: return 7;
    case ErrorCode::kVerificationFailed: return 8;
    case ErrorCode::kDiskFull: return 9;
    case ErrorCode::kBusy: return 10;
    case ErrorCode::kNotWritable: return 11;
    case ErrorCode::kInterrupted: return 130;  // 128 + SIGINT; SIGTERM gives 143 (see signals.cpp)
  }
  return 1;
}

}  // namespace hfget::cli
