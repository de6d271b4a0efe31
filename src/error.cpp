// SPDX-License-Identifier: MIT
#include "hfget/error.hpp"

#include <cerrno>

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
    case ErrorCode::kNotWritable: return "not_writable";
    case ErrorCode::kInternal: return "internal";
  }
  return "internal";
}

Error error_for(const std::filesystem::filesystem_error& failure) {
  const std::error_code cause = failure.code();
  ErrorCode code = ErrorCode::kInternal;
  if (cause == std::errc::read_only_file_system || cause == std::errc::permission_denied ||
      cause == std::errc::operation_not_permitted || cause == std::errc::not_a_directory ||
      cause == std::errc::file_exists || cause == std::errc::is_a_directory) {
    code = ErrorCode::kNotWritable;
  } else if (cause == std::errc::no_space_on_device || cause.value() == EDQUOT) {
    code = ErrorCode::kDiskFull;
  }
  // libstdc++'s what() is "filesystem error: cannot create directories: Read-only file system [/a] [/a/b]":
  // the path first and the cause in the OS's words read better, and name the file as every hfget error does.
  const std::filesystem::path& path = failure.path1().empty() ? failure.path2() : failure.path1();
  std::string message = path.empty() ? cause.message() : path.string() + ": " + cause.message();
  if (code == ErrorCode::kNotWritable)
    message += " (choose a writable --local-dir or --cache-dir, or fix its permissions)";
  return Error(code, message, path);
}

}  // namespace hfget
