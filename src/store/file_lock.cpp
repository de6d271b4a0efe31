// SPDX-License-Identifier: MIT
#include "store/file_lock.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string_view>

#include "hfget/error.hpp"
#include "util/atomic_file.hpp"
#include "util/interruptible_sleep.hpp"

namespace hfget::store {

bool locks_disabled_for_testing() {
  static const bool disabled = [] {
    const char* value = std::getenv("HFGET_TEST_DISABLE_LOCKS");
    return value != nullptr && std::string_view(value) == "1";
  }();
  return disabled;
}

FileLock FileLock::acquire(const std::filesystem::path& lock_path, const std::stop_token& stop) {
  util::UniqueFd fd(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0664));
  if (!fd.valid()) util::throw_file_error("cannot open lock file", lock_path, errno);
  ::fchmod(fd.get(), 0664);  // as the Python client does, so other users of a shared cache can lock it too
  if (locks_disabled_for_testing()) return FileLock(std::move(fd));
  const auto started = std::chrono::steady_clock::now();
  auto next_notice = started + std::chrono::seconds(10);
  while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == ENOLCK || errno == ENOSYS || errno == EOPNOTSUPP) {
      spdlog::debug("file locks are not supported for {}; continuing without", lock_path.string());
      break;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) util::throw_file_error("cannot lock", lock_path, errno);
    if (std::chrono::steady_clock::now() >= next_notice) {
      spdlog::info("waiting for another process to release {}", lock_path.string());
      next_notice += std::chrono::seconds(10);
    }
    if (!util::sleep_unless_stopped(std::chrono::milliseconds(100), stop)) {
      throw Error(ErrorCode::kInterrupted, "interrupted while waiting for " + lock_path.string());
    }
  }
  return FileLock(std::move(fd));
}

}  // namespace hfget::store
