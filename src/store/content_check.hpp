// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <stop_token>

#include "hfget/repo.hpp"

namespace hfget::store {

/// True when `path` is a regular file (not a symlink) of the listed size whose bytes hash to the listed
/// etag (SHA-256 for LFS files, git blob SHA-1 otherwise): a file found at its final path without hfget's
/// record of it (copied in by hand, written by the Python client, or published just before a kill -9).
/// False, not an error, when it shrinks while being read: someone else is rewriting it. Throws
/// Error{kInterrupted} on `stop`, Error for a file that cannot be read.
bool holds_listed_content(const std::filesystem::path& path, const RemoteFile& file, const std::stop_token& stop);

}  // namespace hfget::store
