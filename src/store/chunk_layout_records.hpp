// SPDX-License-Identifier: MIT
// hfget's records of the Xet files it fetched: the chunk layout of each (xet/chunk_layout.hpp), so that a later
// download can copy from the file on disk the chunks its own reconstruction names (chunk-level reuse across
// revisions). Kept in hfget's own folder (store/download_record.hpp), which no other client reads, one file
// per content: <state dir>/xet-layouts/<sha256>. By content, not by path, as the cache's blobs are: a later
// revision finds the bytes wherever they are (another path, another revision's blob), and a file whose
// content changed has no record under its new hash until hfget fetches it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "xet/chunk_layout.hpp"

namespace hfget::store {

/// <state dir>/xet-layouts/<sha256>; `sha256` must be 64 lowercase hex digits (else std::invalid_argument).
std::filesystem::path chunk_layout_path(const std::filesystem::path& state_dir, const std::string& sha256);

/// Writes the record (creating xet-layouts/ inside `state_dir`, which must exist) atomically but not durably:
/// it is a hint, and lost in a power cut the file is only not reused. A layout that covers nothing is not
/// written. Throws hfget::Error on a file system error.
void save_chunk_layout(const std::filesystem::path& state_dir, const std::string& sha256,
                       const xet::ChunkLayout& layout);

/// The record of the content `sha256` of `size` bytes; nullopt when there is none, or it cannot be read or
/// parsed (it is then ignored, and nothing is reused from that file).
std::optional<xet::ChunkLayout> load_chunk_layout(const std::filesystem::path& state_dir, const std::string& sha256,
                                                  std::uint64_t size);

struct ChunkLayoutRecord {
  std::string sha256;
  xet::ChunkLayout layout;  // of the size its record names
};

/// Every record in `state_dir` that parses, by name; damaged ones and names that are not a SHA-256 are
/// skipped. Bounded: at most kMaxChunkLayoutRecords records, kMaxChunkLayoutBytes bytes in all (records of
/// about 4 TB of content), are read; past that the rest are not (their files are only not reused).
std::vector<ChunkLayoutRecord> load_chunk_layouts(const std::filesystem::path& state_dir);
inline constexpr std::size_t kMaxChunkLayoutRecords = 100000;
inline constexpr std::uint64_t kMaxChunkLayoutBytes = 256ULL << 20;

}  // namespace hfget::store
