// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

namespace hfget::store {

/// Bytes an unprivileged writer can still put on the filesystem holding `path` (statvfs f_bavail ×
/// f_frsize). `path` need not exist yet: its nearest existing parent is asked. nullopt if statvfs fails.
std::optional<std::uint64_t> free_bytes(const std::filesystem::path& path);

}  // namespace hfget::store
