// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>

#include "store/target_lock.hpp"

namespace hfget::cache_admin {

/// The target's download lock (<state dir>/download.lock), taken without waiting for a removal: while it is
/// held no hfget download can start writing into the target. Throws Error{kBusy} naming the holder's PID when
/// a download holds it. The state folder must exist.
store::TargetLock lock_for_removal(const std::filesystem::path& state_dir);

}  // namespace hfget::cache_admin
