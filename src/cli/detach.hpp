// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <optional>

namespace hfget::cli {

/// What the launcher tells its caller once the daemon runs.
struct Announcement {
  std::filesystem::path path;  // on stdout, as a download in the foreground prints it at the end (the snapshot,
                               // or the one file asked for by name)
  bool quiet = false;          // -q: no "downloading in the background" line on stderr
};

/// Turns this process into a daemon for `--detach`, so that `ssh host 'hfget download … --detach'` returns at
/// once: the launcher prints the snapshot path on stdout and the daemon's PID and the log path on stderr,
/// and gets 0 back (to exit with); the daemon gets nullopt and carries on, in a new session, with stdin from
/// /dev/null, stdout and stderr appended to `log`, every other inherited descriptor closed and SIGHUP
/// ignored. Forks only once the process has a single thread (waiting for it, bounded; Error otherwise).
std::optional<int> detach_into_background(const std::filesystem::path& log, const std::filesystem::path& state_dir,
                                          const Announcement& announcement);

}  // namespace hfget::cli
