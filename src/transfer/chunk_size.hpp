// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <vector>

#include "hfget/download.hpp"

namespace hfget::transfer {

/// The size of the chunks large files are cut into: --chunk-size when given, else adaptive, 4–64 MiB. Enough
/// chunks that every connection finds one queued (a connection that finds none splits a range in flight,
/// which costs the bytes already on their way to the other connection and a new TCP connection), few enough
/// that per-request overhead and the range journal stay small. Two bounds: the bytes to fetch over 4 chunks
/// per connection, and the open files (at most --max-workers, of about the average large file's size) over
/// 2 chunks per connection. A 64-shard model of 9.8 GB shards gets 64 MiB chunks; one of 32 MiB shards gets
/// 12 MiB (12 open files × 32 MiB / 32).
std::uint64_t chunk_size_for(const DownloadOptions& options, const std::vector<PlannedFile>& plan,
                             std::uint64_t bytes_to_fetch);

/// The download's last bytes that are cut into chunks half as large (ChunkPlan::tail_bytes): two chunks per
/// connection, about what the last files to open hold while they end together. None under --chunk-size: the
/// size asked for is the size used.
std::uint64_t tail_size_for(const DownloadOptions& options, std::uint64_t chunk_bytes);

}  // namespace hfget::transfer
