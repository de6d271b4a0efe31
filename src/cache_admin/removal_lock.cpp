// SPDX-License-Identifier: MIT
#include "cache_admin/removal_lock.hpp"

#include <fmt/format.h>

#include "hfget/error.hpp"

namespace hfget::cache_admin {

store::TargetLock lock_for_removal(const std::filesystem::path& state_dir) {
  try {
    return store::TargetLock::acquire(state_dir, /*wait=*/false, std::stop_token(), [](std::optional<long>) {});
  } catch (const Error& error) {
    if (error.code() != ErrorCode::kBusy) throw;
    // TargetLock's own message gives a downloader's advice (--no-wait); a removal has other options.
    const std::optional<long> holder = store::TargetLock::holder(state_dir);
    throw Error(ErrorCode::kBusy,
                fmt::format("a download{} is writing into this target; nothing was removed (wait for it with "
                            "`hfget wait`, or stop it, then run this again)",
                            holder ? fmt::format(" (PID {})", *holder) : ""),
                state_dir / "download.lock");
  }
}

}  // namespace hfget::cache_admin
