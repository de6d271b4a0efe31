// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>

namespace hfget::store {

/// Copies the regular file `from` to a temporary name beside `to`, flushes it (fdatasync) and renames it over
/// `to`: a reader sees the old file or the whole copy, never a part. The folder of `to` must exist. Throws
/// Error naming the file (kDiskFull for ENOSPC/EDQUOT); the temporary is removed on failure.
void copy_file_atomically(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace hfget::store
