// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <filesystem>

#include "store/read_blocks.hpp"

namespace hfget::store {

/// 16 MiB: mapping and unmapping it costs next to nothing beside hashing it (about 10 ms of SHA-256 on one
/// core), and the mapped pages, which count in the process's RSS, stay bounded to one window per reader.
inline constexpr std::size_t kMappedWindowBytes = 16 << 20;

/// Feeds the whole file at `path` to `consumer` straight from the page cache, with no copy: it maps
/// `window_bytes` (rounded up to whole pages) of the file at a time, read-only, hands the consumer that span
/// and unmaps it. On a warm page cache this is faster than read_blocks, whose pread copies every byte
/// once more (docs/benchmarks.md); cold, it asks for the same sequential read-ahead. A file that cannot be
/// mapped (a filesystem without mmap, no address space left) is read with read_blocks from where mapping
/// failed; an empty file feeds nothing.
///
/// Throws Error naming `path` if the file cannot be opened, if a page cannot be read (EIO), or if the file
/// shrank while mapped ("changed or truncated while being read"): on a mapping those arrive as SIGBUS, which
/// util/sigbus_guard turns back into an error. So the consumer runs under that guard and must keep no object
/// with a non-trivial destructor alive while it reads the span (see util/sigbus_guard.hpp); updating a hash
/// is fine. An exception from the consumer propagates, and the window is unmapped.
void read_file_mapped(const std::filesystem::path& path, const BlockConsumer& consumer,
                      std::size_t window_bytes = kMappedWindowBytes);

}  // namespace hfget::store
