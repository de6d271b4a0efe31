// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>

namespace hfget::cache_admin {

/// True when `path` is `root` or lies below it, compared lexically after normalisation ("a/../b" counts as
/// "b").
bool is_within(const std::filesystem::path& root, const std::filesystem::path& path);

/// Bytes of the regular files at or below `path`, never following a symlink (a symlink counts 0). 0 if
/// absent.
std::uint64_t bytes_below(const std::filesystem::path& path);

/// Removes `path` and everything below it; a symlink is removed, never followed. Refuses (Error{kInternal}),
/// before removing anything, a path that is not strictly inside `root`, or that is reached through a symlink
/// or a non-directory between `root` and it: a symlink placed there could lead the removal outside. Returns
/// the bytes of the regular files removed; an absent path is 0.
std::uint64_t remove_within(const std::filesystem::path& root, const std::filesystem::path& path);

/// Removes `directory` if it is empty and strictly inside `root` (rmdir: never anything else); true if
/// removed.
bool remove_empty_directory_within(const std::filesystem::path& root, const std::filesystem::path& directory);

}  // namespace hfget::cache_admin
