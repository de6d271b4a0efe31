// SPDX-License-Identifier: MIT
// The bytes of a xorb range, as the CAS's presigned URLs serve them: consecutive serialized chunks, each an
// 8-byte header (version 0, compressed size u24 LE, scheme u8, uncompressed size u24 LE) and its payload
// (stored, an LZ4 frame, or an LZ4 frame of the four byte planes of the data: xet-core spec xorb.md). Every
// byte of it is untrusted: a header is checked before its payload is buffered, a payload must decode to
// exactly the size its header announces, and nothing is buffered beyond one chunk, so a hostile CAS can
// neither exhaust memory nor get a wrong length past the decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace hfget::xet {

/// A chunk holds at most 128 KiB of data (spec chunking.md: maximum chunk size).
inline constexpr std::uint32_t kMaxChunkBytes = 128 * 1024;
/// The largest payload accepted in a header. A writer stores a chunk uncompressed when compression does not
/// shrink it, so real payloads stay under kMaxChunkBytes plus an LZ4 frame's overhead; twice that is margin.
inline constexpr std::uint32_t kMaxPayloadBytes = 2 * kMaxChunkBytes;
inline constexpr std::size_t kChunkHeaderBytes = 8;

enum class Compression : std::uint8_t { kNone = 0, kLz4 = 1, kByteGrouping4Lz4 = 2 };

struct ChunkHeader {
  std::uint32_t payload_bytes = 0;  // the compressed size: what follows the header
  Compression compression = Compression::kNone;
  std::uint32_t data_bytes = 0;  // the uncompressed size
};

/// What is wrong with the bytes of a xorb range: they are never written as file bytes, and the range is fetched
/// again. The message names the cause ("chunk 3: LZ4 frame decodes to 65000 bytes, header says 65536").
class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Reads a chunk header. Throws DecodeError for an unknown version or scheme, a size of 0, data over
/// kMaxChunkBytes, a payload over kMaxPayloadBytes, or a stored (kNone) chunk whose two sizes differ.
ChunkHeader parse_chunk_header(std::span<const std::byte, kChunkHeaderBytes> bytes);

/// Decodes one payload into `out` (resized to header.data_bytes). Throws DecodeError when it does not decode
/// to exactly header.data_bytes (an LZ4 error, trailing bytes, a frame shorter or longer than announced).
void decode_chunk(const ChunkHeader& header, std::span<const std::byte> payload, std::vector<std::byte>& out);

/// A chunk's data handed on in pieces, for a consumer that need not hold a whole chunk: begin (its index in
/// the stream, from 0, and its data size, from the checked header), then its data in order, in one piece or
/// several, then end. Each may throw (the exception leaves feed()).
struct ChunkPieces {
  std::function<void(std::uint64_t index, std::uint32_t data_bytes)> begin;
  std::function<void(std::span<const std::byte> data)> data;
  std::function<void()> end;
};

/// Decodes serialized chunks as they arrive, in pieces of any size. Holds at most one chunk (header, payload
/// and decoded data). With a ChunkHandler, each chunk's data is handed on whole once its last payload byte is
/// in. With ChunkPieces, a stored chunk (a model's weights rarely compress: most chunks are stored) is
/// handed on as its bytes arrive, without being copied first, once its header has been checked; a
/// compressed one whole, decoded, as one piece.
class ChunkStreamDecoder {
 public:
  /// Called once per chunk, in order; `index` counts from 0 in this stream. May throw (the exception leaves
  /// feed()).
  using ChunkHandler = std::function<void(std::uint64_t index, std::span<const std::byte> data)>;

  explicit ChunkStreamDecoder(ChunkHandler on_chunk);
  explicit ChunkStreamDecoder(ChunkPieces pieces);

  /// Throws DecodeError at the first malformed chunk; the decoder is then unusable.
  void feed(std::span<const std::byte> bytes);
  /// The stream ended: throws DecodeError when it ended inside a chunk (a truncated range) or feed() threw.
  void finish() const;

  std::uint64_t chunks_decoded() const noexcept { return chunks_decoded_; }
  std::uint64_t data_bytes_decoded() const noexcept { return data_bytes_decoded_; }

 private:
  // Buffers the header's bytes; once all 8 are in, parses them. Returns what is left of `bytes`.
  std::span<const std::byte> take_header(std::span<const std::byte> bytes);
  // Decodes the current chunk and hands it on.
  void finish_chunk(std::span<const std::byte> payload);

  // Hands on part of a stored chunk's payload as it arrives (ChunkPieces only). Returns what is left.
  std::span<const std::byte> stream_stored(std::span<const std::byte> bytes);

  ChunkHandler on_chunk_;
  ChunkPieces pieces_;
  bool streaming_ = false;          // pieces_ is set
  bool stored_begun_ = false;       // pieces_.begin was called for the current stored chunk
  std::uint32_t streamed_ = 0;      // of the current stored chunk's payload, handed on so far
  std::vector<std::byte> pending_;  // the current chunk's header and payload so far
  std::vector<std::byte> decoded_;
  ChunkHeader header_{};
  bool have_header_ = false;
  bool failed_ = false;  // feed() threw: the bytes after the bad chunk cannot be framed
  std::uint64_t chunks_decoded_ = 0;
  std::uint64_t data_bytes_decoded_ = 0;
};

}  // namespace hfget::xet
