// SPDX-License-Identifier: MIT
#include "hfget/error.hpp"

namespace hfget {

std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kUsage: return "usage";
    case ErrorCode::kRepoNotFound: return "repo_not_found";
    case ErrorCode::kAccessDenied: return "access_denied";
    case ErrorCode::kRevisionNotFound: return "revision_not_found";
    case ErrorCode::kFileNotFound: return "file_not_found";
    case ErrorCode::kNetwork: return "network";
    case ErrorCode::kVerificationFailed: return "verification_failed";
    case ErrorCode::kDiskFull: return "disk_full";
    case ErrorCode::kInterrupted: return "interrupted";
    case ErrorCode::kBusy: return "busy";
    case ErrorCode::kInternal: return "internal";
  }
  return "internal";
}

}  // namespace hfget
