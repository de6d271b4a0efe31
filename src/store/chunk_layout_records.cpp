// SPDX-License-Identifier: MIT
#include "store/chunk_layout_records.hpp"

#include <algorithm>
#include <stdexcept>

#include "store/repo_path.hpp"
#include "util/atomic_file.hpp"
#include "util/read_text_file.hpp"
#include "xet/reconstruction.hpp"

namespace hfget::store {
namespace {

constexpr const char* kFolder = "xet-layouts";
// 4 bytes a chunk and 80 a run: a 400 GB file of 64 KiB chunks is ~25 MB. Past this, a record is not read.
constexpr std::uint64_t kMaxRecordBytes = 64ULL << 20;

}  // namespace

std::filesystem::path chunk_layout_path(const std::filesystem::path& state_dir, const std::string& sha256) {
  // The name comes from the listing: checked here too, as it becomes a path.
  if (!xet::is_hash_hex(sha256)) throw std::invalid_argument("chunk layout record: not a SHA-256: " + sha256);
  return state_dir / kFolder / sha256;
}

void save_chunk_layout(const std::filesystem::path& state_dir, const std::string& sha256,
                       const xet::ChunkLayout& layout) {
  if (layout.runs.empty()) return;
  const std::filesystem::path path = chunk_layout_path(state_dir, sha256);
  create_directories_within(state_dir, kFolder);
  util::write_file_atomically(path, xet::serialize_chunk_layout(layout), /*durable=*/false);
}

std::optional<xet::ChunkLayout> load_chunk_layout(const std::filesystem::path& state_dir, const std::string& sha256,
                                                  std::uint64_t size) {
  if (!xet::is_hash_hex(sha256)) return std::nullopt;
  const std::optional<std::string> record = util::read_text_file(chunk_layout_path(state_dir, sha256), kMaxRecordBytes);
  if (!record) return std::nullopt;
  try {
    return xet::parse_chunk_layout(*record, size);
  } catch (const xet::ChunkLayoutError&) {
    return std::nullopt;
  }
}

std::vector<ChunkLayoutRecord> load_chunk_layouts(const std::filesystem::path& state_dir) {
  std::vector<ChunkLayoutRecord> records;
  std::error_code error;
  std::filesystem::directory_iterator entries(state_dir / kFolder, error);
  if (error) return records;
  std::uint64_t bytes_read = 0;
  for (const std::filesystem::directory_entry& entry : entries) {
    if (records.size() >= kMaxChunkLayoutRecords) break;
    const std::string name = entry.path().filename().string();
    // Not followed: a record is a regular file hfget wrote, never a link to something else.
    if (!xet::is_hash_hex(name) || !entry.is_regular_file(error) || entry.is_symlink(error)) continue;
    const std::uint64_t left = kMaxChunkLayoutBytes - bytes_read;
    const std::optional<std::string> record = util::read_text_file(entry.path(), std::min(kMaxRecordBytes, left));
    if (!record) continue;
    bytes_read += record->size();
    try {
      records.push_back({name, xet::parse_chunk_layout(*record, std::nullopt)});
    } catch (const xet::ChunkLayoutError&) {
      // a damaged record only means nothing is copied from that file
    }
  }
  return records;
}

}  // namespace hfget::store
