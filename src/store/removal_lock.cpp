// SPDX-License-Identifier: MIT
#include "store/removal_lock.hpp"

#include <fmt/format.h>

#include "hfget/error.hpp"

namespace hfget::store {

TargetLock lock_for_removal(const std::filesystem::path& state_dir) {
  try {
    return TargetLock::acquire(state_dir, /*wait=*/false, std::stop_token(), [](std::optional<long>) {});
  } catch (const Error& error) {
    if (error.code() != ErrorCode::kBusy) throw;
    // TargetLock's own message gives a downloader's advice (--no-wait); a removal has other options.
    const std::optional<long> holder = TargetLock::holder(state_dir);
    throw Error(ErrorCode::kBusy,
                fmt::format("a download{} is writing into this target; nothing was removed (wait for it with "
                            "`hfget wait`, or stop it, then run this again)",
                            holder ? fmt::format(" (PID {})", *holder) : ""),
                state_dir / "download.lock");
  }
}

}  // namespace hfget::store
