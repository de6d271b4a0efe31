// SPDX-License-Identifier: MIT
#include "hfget/error.hpp"

#include "util/printable.hpp"
#include "util/secrets.hpp"

namespace hfget {

namespace detail {

std::string printable_message(const std::string& message) {
  // Long enough for any message hfget composes (several causes and paths), short enough that a server's
  // megabyte of error text cannot flood a terminal.
  constexpr std::size_t kMaxMessageBytes = 8192;
  // Redacted before it is cut, so that a cut cannot leave the start of a token behind.
  return util::printable(util::redact_secrets(message), kMaxMessageBytes);
}

}  // namespace detail

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
