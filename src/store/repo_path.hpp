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
/// no empty, "." or ".." component, no backslash, drive letter, NUL, control byte, invisible or bidi
/// character or invalid UTF-8, no over-long name, no ".git" component (in any case or spelling git refuses).
std::optional<std::string> unsafe_path_reason(std::string_view path);

/// ".cache/huggingface" or a path below it (any case): the folder where a local dir keeps hfget's and
/// huggingface_hub's own metadata. A listed file there would let the server write that bookkeeping.
bool is_reserved_metadata_path(std::string_view path);

/// Removes the reserved metadata paths from `files` (a git repo may hold them; they are never downloaded)
/// and returns them, printable, for a warning. Then throws Error{kNetwork} naming the path when
/// unsafe_path_reason() finds a problem, for a path listed twice, for a path that is both a file and a
/// directory ("a" and "a/b"), and for sizes adding up to more than any real repository (2^53 bytes), so that
/// no later sum of listed sizes can overflow.
std::vector<std::string> validate_listing(std::vector<RemoteFile>& files);

/// Creates root/relative_dir one component at a time, refusing to go through anything that is not a real
/// directory (a symlink placed there beforehand could otherwise lead a write outside the target).
void create_directories_within(const std::filesystem::path& root, const std::filesystem::path& relative_dir);

}  // namespace hfget::store
