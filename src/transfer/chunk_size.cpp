// SPDX-License-Identifier: MIT
#include "transfer/chunk_size.hpp"

#include <algorithm>

namespace hfget::transfer {
namespace {

// An adaptive count starts at 16 and may climb to 64: chunks cut for 32 keep every one of them busy without
// a request per few MiB on the way up (the tail is re-split for the idle ones anyway).
constexpr int kChunkingConnections = 32;

std::uint64_t chunking_connections(const DownloadOptions& options) {
  return static_cast<std::uint64_t>(std::max(options.connections.value_or(kChunkingConnections), 1));
}

}  // namespace

std::uint64_t chunk_size_for(const DownloadOptions& options, const std::vector<PlannedFile>& plan,
                             std::uint64_t bytes_to_fetch) {
  if (options.chunk_bytes > 0) return options.chunk_bytes;
  constexpr std::uint64_t kMinChunk = 4 << 20;
  constexpr std::uint64_t kMaxChunk = 64 << 20;
  const std::uint64_t connections = chunking_connections(options);
  std::uint64_t large_bytes = 0;
  std::uint64_t large_files = 0;
  for (const PlannedFile& planned : plan) {
    if (planned.complete || planned.file.size < kMinChunk) continue;
    large_bytes += planned.file.size;
    large_files += 1;
  }
  std::uint64_t chunk = bytes_to_fetch / (connections * 4);
  if (large_files > 0) {
    const std::uint64_t open_at_once =
        std::min<std::uint64_t>(large_files, static_cast<std::uint64_t>(std::max(options.max_workers, 1)));
    chunk = std::min(chunk, large_bytes / large_files * open_at_once / (connections * 2));
  }
  return std::clamp(chunk, kMinChunk, kMaxChunk);
}

std::uint64_t tail_size_for(const DownloadOptions& options, std::uint64_t chunk_bytes) {
  if (options.chunk_bytes > 0) return 0;
  return 2 * chunking_connections(options) * chunk_bytes;
}

}  // namespace hfget::transfer
