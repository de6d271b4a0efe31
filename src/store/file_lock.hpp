// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <stop_token>

#include "util/unique_fd.hpp"

namespace hfget::store {

/// An exclusive flock on a lock file, the same files huggingface_hub locks (so the two tools do not download
/// the same blob at once). Correctness never depends on it: partial names are ours and publishing is an
/// atomic rename of verified bytes; on NFS or Lustre flock may silently succeed for everyone.
/// True when HFGET_TEST_DISABLE_LOCKS=1: every flock (per file and per target) is skipped, as on a network
/// filesystem where flock silently succeeds for everyone. For tests that prove correctness without locks.
bool locks_disabled_for_testing();

class FileLock {
 public:
  /// Blocks until the lock is held (logging every 10 s while another process holds it) or `stop` fires,
  /// in which case it throws Error{kInterrupted}.
  static FileLock acquire(const std::filesystem::path& lock_path, const std::stop_token& stop);

 private:
  explicit FileLock(util::UniqueFd fd) : fd_(std::move(fd)) {}
  util::UniqueFd fd_;  // closing it releases the lock
};

}  // namespace hfget::store
