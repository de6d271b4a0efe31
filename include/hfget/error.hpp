// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace hfget {

/// What went wrong, at the level a user can act on. src/cli/exit_code.cpp maps each to an exit code.
enum class ErrorCode {
  kUsage,               // bad flags, invalid repo id, conflicting options
  kRepoNotFound,        // the repo does not exist, or is private and we have no token for it
  kAccessDenied,        // gated repo, token missing or rejected
  kRevisionNotFound,    // branch, tag or commit unknown
  kFileNotFound,        // a requested file is not in the repo
  kNetwork,             // transfers failed after every retry, or the Hub is unreachable
  kVerificationFailed,  // bytes on disk do not match the listing's size or hash
  kDiskFull,            // ENOSPC or EDQUOT while writing
  kInterrupted,         // SIGINT or SIGTERM
  kBusy,                // another hfget is downloading into the same target (--no-wait)
  kNotWritable,         // the target cannot be created or written: read-only, permission, a file in the way
  kInternal,            // a bug, or an OS error we did not expect
};

std::string_view to_string(ErrorCode code) noexcept;

namespace detail {
/// `message` made safe to print: control and bidi characters escaped (a path or header value a server chose
/// may hold them), registered secrets redacted (a server may echo the token). See src/util/printable.hpp.
std::string printable_message(const std::string& message);
}  // namespace detail

/// The one exception type of the library: "this operation cannot continue", with a category the CLI can map
/// and the file it concerns, if any. The message names the cause; it never contains a token or a control
/// character, whatever the server put into the strings it is made of (the constructor sees to both).
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message, std::filesystem::path file = {})
      : std::runtime_error(detail::printable_message(message)), code_(code), file_(std::move(file)) {}

  ErrorCode code() const noexcept { return code_; }
  const std::filesystem::path& file() const noexcept { return file_; }

 private:
  ErrorCode code_;
  std::filesystem::path file_;
};

/// The library's Error for a std::filesystem failure: "<path>: <cause>", as kNotWritable when the cause is
/// one a user fixes by choosing another target (read-only filesystem, permission, a file where a directory
/// must be), kDiskFull for ENOSPC/EDQUOT, kInternal otherwise.
Error error_for(const std::filesystem::filesystem_error& failure);

}  // namespace hfget
