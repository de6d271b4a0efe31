// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <filesystem>

#include "io/read_blocks.hpp"
#include "io/read_method_chooser.hpp"

namespace hfget::io {

/// 16 MiB: mapping and unmapping it costs next to nothing beside hashing it (about 10 ms of SHA-256 on one
/// core), it is long enough to time one read method on, and the mapped pages, which count in the process's
/// RSS, stay bounded to one window per reader.
inline constexpr std::size_t kReadWindowBytes = 16 << 20;

/// The copied method's buffer: small enough to stay in the CPU's cache between pread's copy into it and the
/// consumer's read of it (4 MiB blocks did not, and cost a pass over memory).
inline constexpr std::size_t kCopyBlockBytes = 256 << 10;

/// The mapped method's pieces: a window goes to the consumer this much at a time, so that the reader can
/// touch the pages ahead of the one being consumed (file_reads.cpp says why).
inline constexpr std::size_t kMappedPieceBytes = 16 << 10;

/// Feeds the whole file at `path` to `consumer`, in order, `window_bytes` (rounded up to whole pages) at a
/// time. `chooser` picks how each window is read (see io/read_method_chooser.hpp) and learns from the
/// thread's CPU time for it: mapped, the consumer gets the page cache's bytes with no copy, kMappedPieceBytes
/// at a time; copied, it gets blocks of kCopyBlockBytes. Both ask the kernel for sequential read-ahead. A
/// window that cannot be mapped (a filesystem without mmap, no address space left) is copied; an empty file
/// feeds nothing.
///
/// Throws Error naming `path` if the file cannot be opened, if a page cannot be read (EIO), or if the file
/// shrank while read ("changed or truncated while being read", ErrorCode::kVerificationFailed). On a mapping
/// those arrive as SIGBUS, which util/sigbus_guard turns back into an error. So the consumer runs under that
/// guard and must keep no object with a non-trivial destructor alive while it reads the span (see
/// util/sigbus_guard.hpp); updating a hash is fine. An exception from the consumer propagates.
void read_file(const std::filesystem::path& path, const BlockConsumer& consumer,
               ReadMethodChooser& chooser = ReadMethodChooser::process_wide(),
               std::size_t window_bytes = kReadWindowBytes);

}  // namespace hfget::io
