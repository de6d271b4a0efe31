// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>

namespace hfget::store {

using BlockConsumer = std::function<void(std::span<const std::byte>)>;

inline constexpr std::size_t kSequentialReadBytes = 4 << 20;

/// Feeds bytes [begin, end) of `fd` to `consumer` in sequential blocks of `block_bytes`, with a read-ahead
/// hint; throws Error naming `path` if they cannot be read. One buffer, whatever the file size.
void read_blocks(int fd, std::uint64_t begin, std::uint64_t end, const std::filesystem::path& path,
                 const BlockConsumer& consumer, std::size_t block_bytes = kSequentialReadBytes);

}  // namespace hfget::store
