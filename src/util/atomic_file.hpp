// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <string_view>

namespace hfget::util {

/// Every temporary name hfget creates ends with this, so that what a kill -9 left behind can be swept.
inline constexpr std::string_view kTemporarySuffix = ".hfget-tmp";

/// A new temporary name next to `path`, ".<name>.<owner>.hfget-tmp" (<name> cut short where the whole would
/// pass 255 bytes): the owner token lets a later run sweep it as soon as this process is gone (see
/// remove_stale_temporaries). Every temporary hfget creates is named here.
std::filesystem::path temporary_path_beside(const std::filesystem::path& path);

/// Removes leftover temporaries (files or links named *.hfget-tmp) under `directory`: those of a process
/// that is gone, and any a minute old (see util/process_owner.hpp).
void remove_stale_temporaries(const std::filesystem::path& directory);

/// Writes `content` to a unique temporary name next to `path`, flushes it, and renames it over `path`, so a
/// reader sees the old content or the new, never a torn file.
/// `durable` also flushes the data to the device first (fdatasync); without it the rename is still atomic
/// for readers and survives kill -9, just not a power loss.
void write_file_atomically(const std::filesystem::path& path, std::string_view content, bool durable = true);

/// Throws the right hfget::Error for a failed file operation: kDiskFull for ENOSPC/EDQUOT, kInternal otherwise.
[[noreturn]] void throw_file_error(const std::string& what, const std::filesystem::path& path, int error_number);

}  // namespace hfget::util
