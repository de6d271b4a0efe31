// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <optional>

namespace hfget::cli {

/// Turns this process into a daemon for `--detach`, so that `ssh host 'hfget download … --detach'` returns at
/// once: the launcher prints the daemon's PID and the log path and gets 0 back (to exit with); the daemon gets
/// nullopt and carries on, in a new session, with stdin from /dev/null, stdout and stderr appended to `log`,
/// every other inherited descriptor closed and SIGHUP ignored. Call it before any thread exists.
std::optional<int> detach_into_background(const std::filesystem::path& log, const std::filesystem::path& state_dir);

}  // namespace hfget::cli
