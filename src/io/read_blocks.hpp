// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>

namespace hfget::io {

using BlockConsumer = std::function<void(std::span<const std::byte>)>;

inline constexpr std::size_t kSequentialReadBytes = 4 << 20;

/// Feeds bytes [begin, end) of `fd` to `consumer` in sequential blocks of `block_bytes`, with a read-ahead
/// hint; throws Error naming `path` if they cannot be read. One buffer, whatever the file size.
void read_blocks(int fd, std::uint64_t begin, std::uint64_t end, const std::filesystem::path& path,
                 const BlockConsumer& consumer, std::size_t block_bytes = kSequentialReadBytes);

/// Feeds bytes [begin, end) of `fd` to `consumer`, one `pread` into `buffer` at a time. Returns `end`, or
/// the offset where the file ended if it is shorter (each caller says what that means); throws Error naming
/// `path` when a read fails.
std::uint64_t read_through(int fd, std::uint64_t begin, std::uint64_t end, std::span<std::byte> buffer,
                           const std::filesystem::path& path, const BlockConsumer& consumer);

}  // namespace hfget::io
