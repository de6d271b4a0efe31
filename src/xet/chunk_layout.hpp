// SPDX-License-Identifier: MIT
// A Xet file's chunk layout: which chunks of which xorbs lie at which offsets of the file. A reconstruction
// names a file's content as (xorb, chunk range) terms but gives only each term's total length, and the terms
// of a later revision are mostly sub-ranges of the earlier one's (a writer that dedups cuts a term wherever
// the content changed). To find such a sub-range in a file already on disk, each chunk's decoded length is
// needed: hfget records it as it decodes a file, so that a later download can copy those chunks from that file
// instead of fetching them again (chunk-level reuse across revisions).
//
// A record is read back from disk, where anything may have changed it: parse_chunk_layout checks every bound,
// and what it accepts is a hint only. Bytes copied on its word are checked like fetched ones, by the whole
// file's SHA-256.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hfget::xet {

/// Chunks [chunk_begin, chunk_begin + lengths.size()) of one xorb, decoded to the bytes of the file from
/// file_offset on, back to back.
struct ChunkRun {
  std::string xorb_hash;  // 64 lowercase hex digits
  std::uint64_t file_offset = 0;
  std::uint32_t chunk_begin = 0;
  std::vector<std::uint32_t> lengths;  // each chunk's decoded bytes, in chunk order

  std::uint32_t chunk_end() const noexcept { return chunk_begin + static_cast<std::uint32_t>(lengths.size()); }
  std::uint64_t bytes() const noexcept;
  bool operator==(const ChunkRun&) const = default;
};

/// Where the bytes of some chunks lie in a file: from `offset`, each chunk's length in turn (pointing into the
/// layout's run, valid while the layout is).
struct FileSpan {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  std::span<const std::uint32_t> lengths;
  bool operator==(const FileSpan& other) const { return offset == other.offset && bytes == other.bytes; }
};

struct ChunkLayout {
  std::uint64_t file_size = 0;
  std::vector<ChunkRun> runs;  // by file_offset, none overlapping; gaps are bytes of unknown chunks

  /// Where chunks [chunk_begin, chunk_end) of `xorb_hash` lie back to back in the file, if one run holds them.
  std::optional<FileSpan> find(std::string_view xorb_hash, std::uint32_t chunk_begin, std::uint32_t chunk_end) const;
  /// The bytes the runs cover.
  std::uint64_t covered_bytes() const noexcept;
  bool operator==(const ChunkLayout&) const = default;
};

/// Collects the chunks of one file as the connections decode them, in any order and from any thread. Each
/// chunk is added as it is decoded, with the offset the reconstruction puts it at, even when the range writes only
/// part of it (a neighbouring range writes the rest): the layout is kept only for a file whose SHA-256 matched,
/// so it then says what the file holds. A file resumed from an earlier run's bytes lacks the
/// chunks that run decoded, and its layout then has gaps (nothing is reused from them).
class ChunkLayoutBuilder {
 public:
  /// Past this many chunks (a CAS that cuts a file into tiny chunks) the rest are not recorded: the record's
  /// memory while the file downloads stays bounded (24 bytes a chunk: ~3.6 MB for a 10 GB file of 64 KiB
  /// chunks, 96 MiB at most), at the cost of gaps.
  static constexpr std::size_t kMaxChunks = 1 << 22;

  explicit ChunkLayoutBuilder(std::uint64_t file_size) : file_size_(file_size) {}
  ChunkLayoutBuilder(const ChunkLayoutBuilder&) = delete;
  ChunkLayoutBuilder& operator=(const ChunkLayoutBuilder&) = delete;

  /// Chunk `chunk` of `xorb_hash`, `length` decoded bytes, written at `file_offset`. A chunk that would reach
  /// past the file's size or overlap one added before is left out.
  void add(std::uint64_t file_offset, std::string_view xorb_hash, std::uint32_t chunk, std::uint32_t length);
  /// The layout of what was added: chunks that follow each other in one xorb and in the file make one run.
  ChunkLayout layout() const;
  /// Forgets every chunk added (the file is fetched again from its first byte).
  void clear();

 private:
  struct Entry {
    std::uint64_t file_offset;
    std::uint32_t xorb;  // index into xorbs_
    std::uint32_t chunk;
    std::uint32_t length;
  };
  const std::uint64_t file_size_;
  mutable std::mutex mutex_;
  std::vector<std::string> xorbs_;
  std::vector<Entry> entries_;
};

/// The record is not a layout hfget wrote for a file of this size: wrong magic or version, truncated or
/// trailing bytes, a hash that is not 64 lowercase hex digits, an empty run, a chunk length of 0 or over
/// kMaxChunkBytes, chunk indices that overflow, runs out of order, overlapping or past the file's end.
class ChunkLayoutError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A compact binary record: a header (magic, version, file size, run count), then per run the xorb hash (64
/// hex digits), the file offset, the first chunk, the chunk count and each chunk's length (little-endian).
/// About 4 bytes per chunk of ~64 KiB: 0.006 % of the file.
std::string serialize_chunk_layout(const ChunkLayout& layout);
/// Parses a record written by serialize_chunk_layout for a file of `file_size` bytes (nullopt: of the size the
/// record names, which the caller then checks against the file it describes).
ChunkLayout parse_chunk_layout(std::string_view record, std::optional<std::uint64_t> file_size);

}  // namespace hfget::xet
