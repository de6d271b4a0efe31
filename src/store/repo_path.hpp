// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hfget/repo.hpp"

namespace hfget::store {

/// Why a path from the server may not touch the disk, or nullopt when it is safe: relative, '/'-separated,
/// no empty, "." or ".." component, no backslash, drive letter, NUL or control byte, no over-long name.
std::optional<std::string> unsafe_path_reason(std::string_view path);

/// Throws Error{kNetwork} naming the path when unsafe_path_reason() finds a problem. Also refuses duplicate
/// paths and a path that is both a file and a directory ("a" and "a/b").
void validate_listing(const std::vector<RemoteFile>& files);

/// Creates root/relative_dir one component at a time, refusing to go through anything that is not a real
/// directory (a symlink placed there beforehand could otherwise lead a write outside the target).
void create_directories_within(const std::filesystem::path& root, const std::filesystem::path& relative_dir);

}  // namespace hfget::store
