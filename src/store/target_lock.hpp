// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <stop_token>

#include "util/unique_fd.hpp"

namespace hfget::store {

/// One hfget download per target (a local dir, or a repo in the cache) at a time: an flock on
/// <state dir>/download.lock, which also holds the holder's PID so a second run can say whom it waits for.
/// The per-file locks the Python client shares are taken as well; this one only orders hfget runs.
class TargetLock {
 public:
  /// Takes the lock. If another process holds it: with `wait`, calls `on_wait(holder_pid)` once and blocks
  /// until it is free or `stop` fires (Error{kInterrupted}); without, throws Error{kBusy} naming the holder.
  static TargetLock acquire(const std::filesystem::path& state_dir, bool wait, const std::stop_token& stop,
                            const std::function<void(std::optional<long>)>& on_wait);

  /// The PID recorded by the process holding the lock, if any process holds it.
  static std::optional<long> holder(const std::filesystem::path& state_dir);

 private:
  explicit TargetLock(util::UniqueFd fd) : fd_(std::move(fd)) {}
  util::UniqueFd fd_;
};

}  // namespace hfget::store
