// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace hfget::util {

/// The whole file, or nullopt when it cannot be read or is larger than `max_bytes` (files written by others,
/// such as a shard index, must not make us allocate without bound).
std::optional<std::string> read_text_file(const std::filesystem::path& path, std::uint64_t max_bytes = 64 << 20);

}  // namespace hfget::util
