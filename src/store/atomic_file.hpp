// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <string_view>

namespace hfget::store {

/// Writes `content` to a unique temporary name next to `path`, flushes it, and renames it over `path`, so a
/// reader sees the old content or the new, never a torn file.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

/// Throws the right hfget::Error for a failed file operation: kDiskFull for ENOSPC/EDQUOT, kInternal otherwise.
[[noreturn]] void throw_file_error(const std::string& what, const std::filesystem::path& path, int error_number);

}  // namespace hfget::store
