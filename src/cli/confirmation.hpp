// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace hfget {
struct DownloadOptions;
}

namespace hfget::cli {

/// Whether a destructive command may go ahead: with `--yes`, always; with a terminal on stdin, when the user
/// answers y to `question` (asked on stderr); otherwise (a script, a pipe) it throws Error{kUsage} telling
/// the caller to pass --yes, so that nothing is ever deleted by an unattended default.
bool confirmed(bool yes_flag, const std::string& question);

/// Throws Error{kBusy} naming the PID when a download holds `target`'s lock: a removal must not pull files
/// from under it. `what` names the target in the message.
void refuse_while_downloading(const DownloadOptions& target, const std::string& what);

}  // namespace hfget::cli
