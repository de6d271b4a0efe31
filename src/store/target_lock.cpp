// SPDX-License-Identifier: MIT
#include "store/target_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>

#include "hfget/error.hpp"
#include "store/file_lock.hpp"
#include "util/atomic_file.hpp"
#include "util/interruptible_sleep.hpp"

namespace hfget::store {
namespace {

std::filesystem::path lock_file(const std::filesystem::path& state_dir) {
  return state_dir / "download.lock";
}

std::optional<long> read_pid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
  if (n <= 0) return std::nullopt;
  try {
    return std::stol(std::string(text, static_cast<std::size_t>(n)));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

TargetLock TargetLock::acquire(const std::filesystem::path& state_dir, bool wait, const std::stop_token& stop,
                               const std::function<void(std::optional<long>)>& on_wait) {
  const std::filesystem::path path = lock_file(state_dir);
  util::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0664));
  if (!fd.valid()) util::throw_file_error("cannot open lock file", path, errno);
  bool announced = false;
  while (!locks_disabled_for_testing() && ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) break;  // no flock here (some network filesystems): go on unlocked
    const std::optional<long> pid = read_pid(fd.get());
    if (!wait) {
      throw Error(ErrorCode::kBusy,
                  fmt::format("another hfget{} is downloading into this target (lock {}); wait for it, or run "
                              "without --no-wait to queue behind it",
                              pid ? fmt::format(" (PID {})", *pid) : "", path.string()));
    }
    if (!announced) {
      on_wait(pid);
      announced = true;
    }
    if (!util::sleep_unless_stopped(std::chrono::milliseconds(200), stop)) {
      throw Error(ErrorCode::kInterrupted, "interrupted while waiting for " + path.string());
    }
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd.get(), 0) == 0) {
    [[maybe_unused]] const ssize_t written = ::pwrite(fd.get(), pid.data(), pid.size(), 0);
  }
  return TargetLock(std::move(fd));
}

std::optional<long> TargetLock::holder(const std::filesystem::path& state_dir) {
  util::UniqueFd fd(::open(lock_file(state_dir).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return std::nullopt;
  if (::flock(fd.get(), LOCK_SH | LOCK_NB) == 0) return std::nullopt;  // nobody holds it
  return read_pid(fd.get());
}

}  // namespace hfget::store
