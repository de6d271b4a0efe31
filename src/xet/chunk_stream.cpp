// SPDX-License-Identifier: MIT
// Xet chunk headers and payloads, decoded with exact-length checks (see chunk_stream.hpp). LZ4 payloads are
// LZ4 *frames* (the writers use a frame encoder), so liblz4's LZ4F API decodes them, into a buffer of exactly
// the announced size; a frame that would write one byte more is caught by a probe into a scratch buffer.
#include "xet/chunk_stream.hpp"

#include <lz4frame.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <utility>

namespace hfget::xet {
namespace {

constexpr std::uint8_t kChunkVersion = 0;

std::uint32_t read_u24(std::span<const std::byte> bytes) {
  return std::to_integer<std::uint32_t>(bytes[0]) | (std::to_integer<std::uint32_t>(bytes[1]) << 8U) |
         (std::to_integer<std::uint32_t>(bytes[2]) << 16U);
}

std::string scheme_name(Compression compression) {
  switch (compression) {
    case Compression::kNone: return "stored";
    case Compression::kLz4: return "LZ4";
    case Compression::kByteGrouping4Lz4: return "ByteGrouping4-LZ4";
  }
  return "unknown";
}

struct DctxDeleter {
  void operator()(LZ4F_dctx* dctx) const noexcept { LZ4F_freeDecompressionContext(dctx); }
};
using Lz4FrameContext = std::unique_ptr<LZ4F_dctx, DctxDeleter>;

Lz4FrameContext make_lz4_context() {
  LZ4F_dctx* dctx = nullptr;
  const std::size_t result = LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION);
  Lz4FrameContext owner(dctx);
  if (LZ4F_isError(result)) {
    throw DecodeError(std::string("cannot create an LZ4 decoder: ") + LZ4F_getErrorName(result));
  }
  return owner;
}

// Decodes one whole LZ4 frame that must fill `out` exactly and end exactly at the end of `frame`.
void decode_lz4_frame(std::span<const std::byte> frame, std::span<std::byte> out) {
  const Lz4FrameContext dctx = make_lz4_context();
  std::array<std::byte, 64> probe{};  // where output past the announced size would go
  std::size_t consumed = 0;
  std::size_t produced = 0;
  std::size_t overflow = 0;
  for (;;) {
    const bool out_full = produced == out.size();
    std::byte* destination = out_full ? probe.data() : out.data() + produced;
    std::size_t destination_size = out_full ? probe.size() : out.size() - produced;
    std::size_t source_size = frame.size() - consumed;
    const std::size_t hint =
        LZ4F_decompress(dctx.get(), destination, &destination_size, frame.data() + consumed, &source_size, nullptr);
    if (LZ4F_isError(hint)) throw DecodeError(std::string("LZ4 frame is corrupt: ") + LZ4F_getErrorName(hint));
    consumed += source_size;
    (out_full ? overflow : produced) += destination_size;
    if (overflow > 0) {
      throw DecodeError("LZ4 frame decodes to more than the " + std::to_string(out.size()) + " bytes the header says");
    }
    if (hint == 0) break;  // the frame's end mark (and checksum, if any) is read
    if (source_size == 0 && destination_size == 0) {
      throw DecodeError("LZ4 frame is truncated: it ends after " + std::to_string(produced) + " of " +
                        std::to_string(out.size()) + " bytes");
    }
  }
  if (consumed != frame.size()) {
    throw DecodeError(std::to_string(frame.size() - consumed) + " bytes follow the LZ4 frame in the payload");
  }
  if (produced != out.size()) {
    throw DecodeError("LZ4 frame decodes to " + std::to_string(produced) + " bytes, header says " +
                      std::to_string(out.size()));
  }
}

// The writer split the data into four planes (byte i into plane i % 4) and concatenated them; plane p holds
// ceil((n - p) / 4) bytes, so when n is not a multiple of 4 the first n % 4 planes are one byte longer.
void regroup_byte_planes(std::span<const std::byte> planes, std::span<std::byte> out) {
  const std::size_t n = out.size();
  std::size_t plane_begin = 0;
  for (std::size_t plane = 0; plane < 4 && plane < n; ++plane) {
    const std::size_t plane_size = (n - plane + 3) / 4;
    for (std::size_t j = 0; j < plane_size; ++j) out[plane + 4 * j] = planes[plane_begin + j];
    plane_begin += plane_size;
  }
}

std::string chunk_prefix(std::uint64_t index) {
  return "chunk " + std::to_string(index) + ": ";
}

}  // namespace

ChunkHeader parse_chunk_header(std::span<const std::byte, kChunkHeaderBytes> bytes) {
  const auto version = std::to_integer<std::uint8_t>(bytes[0]);
  if (version != kChunkVersion) throw DecodeError("unknown chunk header version " + std::to_string(version));
  const auto scheme = std::to_integer<std::uint8_t>(bytes[4]);
  if (scheme > static_cast<std::uint8_t>(Compression::kByteGrouping4Lz4)) {
    throw DecodeError("unknown compression scheme " + std::to_string(scheme));
  }
  ChunkHeader header;
  header.payload_bytes = read_u24(bytes.subspan(1, 3));
  header.compression = static_cast<Compression>(scheme);
  header.data_bytes = read_u24(bytes.subspan(5, 3));
  if (header.payload_bytes == 0 || header.data_bytes == 0) {
    throw DecodeError("chunk header announces an empty chunk (payload " + std::to_string(header.payload_bytes) +
                      " bytes, data " + std::to_string(header.data_bytes) + " bytes)");
  }
  if (header.data_bytes > kMaxChunkBytes) {
    throw DecodeError("chunk data of " + std::to_string(header.data_bytes) + " bytes is over the " +
                      std::to_string(kMaxChunkBytes) + "-byte maximum");
  }
  if (header.payload_bytes > kMaxPayloadBytes) {
    throw DecodeError("chunk payload of " + std::to_string(header.payload_bytes) + " bytes is over the " +
                      std::to_string(kMaxPayloadBytes) + "-byte maximum");
  }
  if (header.compression == Compression::kNone && header.payload_bytes != header.data_bytes) {
    throw DecodeError("stored chunk has a payload of " + std::to_string(header.payload_bytes) + " bytes but data of " +
                      std::to_string(header.data_bytes));
  }
  return header;
}

void decode_chunk(const ChunkHeader& header, std::span<const std::byte> payload, std::vector<std::byte>& out) {
  if (payload.size() != header.payload_bytes) {
    throw DecodeError(scheme_name(header.compression) + " payload has " + std::to_string(payload.size()) +
                      " bytes, header says " + std::to_string(header.payload_bytes));
  }
  if (header.data_bytes > kMaxChunkBytes) throw DecodeError("chunk data is over the maximum chunk size");
  out.resize(header.data_bytes);
  switch (header.compression) {
    case Compression::kNone:
      if (payload.size() != out.size()) throw DecodeError("stored chunk's payload and data sizes differ");
      std::copy(payload.begin(), payload.end(), out.begin());
      return;
    case Compression::kLz4: decode_lz4_frame(payload, out); return;
    case Compression::kByteGrouping4Lz4: {
      std::vector<std::byte> planes(out.size());
      decode_lz4_frame(payload, planes);
      regroup_byte_planes(planes, out);
      return;
    }
  }
  throw DecodeError("unknown compression scheme");
}

ChunkStreamDecoder::ChunkStreamDecoder(ChunkHandler on_chunk) : on_chunk_(std::move(on_chunk)) {
  pending_.reserve(kChunkHeaderBytes);
}

ChunkStreamDecoder::ChunkStreamDecoder(ChunkPieces pieces) : pieces_(std::move(pieces)), streaming_(true) {
  pending_.reserve(kChunkHeaderBytes);
}

void ChunkStreamDecoder::feed(std::span<const std::byte> bytes) {
  if (failed_) throw DecodeError(chunk_prefix(chunks_decoded_) + "the stream already failed to decode");
  failed_ = true;  // until this call returns normally: a throw from anywhere below leaves the decoder unusable
  while (!bytes.empty()) {
    if (!have_header_) bytes = take_header(bytes);
    if (!have_header_) break;
    if (streaming_ && header_.compression == Compression::kNone) {
      bytes = stream_stored(bytes);
      continue;
    }
    const std::size_t chunk_bytes = kChunkHeaderBytes + header_.payload_bytes;
    if (pending_.size() == kChunkHeaderBytes && bytes.size() >= header_.payload_bytes) {
      // The whole payload is in this piece: decode it in place rather than copying it first.
      finish_chunk(bytes.first(header_.payload_bytes));
      bytes = bytes.subspan(header_.payload_bytes);
      continue;
    }
    const std::size_t wanted = std::min(chunk_bytes - pending_.size(), bytes.size());
    pending_.insert(pending_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(wanted));
    bytes = bytes.subspan(wanted);
    if (pending_.size() == chunk_bytes) finish_chunk(std::span<const std::byte>(pending_).subspan(kChunkHeaderBytes));
  }
  failed_ = false;
}

std::span<const std::byte> ChunkStreamDecoder::stream_stored(std::span<const std::byte> bytes) {
  // The header said stored, with equal sizes (parse_chunk_header): the payload is the data.
  if (!stored_begun_) {
    pieces_.begin(chunks_decoded_, header_.data_bytes);
    stored_begun_ = true;
  }
  const auto take = static_cast<std::uint32_t>(std::min<std::size_t>(header_.payload_bytes - streamed_, bytes.size()));
  if (take > 0) pieces_.data(bytes.first(take));
  streamed_ += take;
  if (streamed_ == header_.payload_bytes) {
    ++chunks_decoded_;
    data_bytes_decoded_ += header_.data_bytes;
    have_header_ = false;
    stored_begun_ = false;
    streamed_ = 0;
    pending_.clear();
    pieces_.end();
  }
  return bytes.subspan(take);
}

std::span<const std::byte> ChunkStreamDecoder::take_header(std::span<const std::byte> bytes) {
  const std::size_t wanted = std::min(kChunkHeaderBytes - pending_.size(), bytes.size());
  pending_.insert(pending_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(wanted));
  if (pending_.size() == kChunkHeaderBytes) {
    try {
      header_ = parse_chunk_header(std::span<const std::byte, kChunkHeaderBytes>(pending_.data(), kChunkHeaderBytes));
    } catch (const DecodeError& error) {
      throw DecodeError(chunk_prefix(chunks_decoded_) + error.what());
    }
    have_header_ = true;
    pending_.reserve(kChunkHeaderBytes + header_.payload_bytes);  // bounded by kMaxPayloadBytes
  }
  return bytes.subspan(wanted);
}

void ChunkStreamDecoder::finish_chunk(std::span<const std::byte> payload) {
  // A stored chunk is handed on where it lies (the input, or pending_): weights rarely compress, so most
  // chunks are stored, and a copy of each would cost as much as the write itself.
  std::span<const std::byte> data = payload;
  try {
    if (header_.compression != Compression::kNone || payload.size() != header_.data_bytes) {
      decode_chunk(header_, payload, decoded_);
      data = decoded_;
    }
  } catch (const DecodeError& error) {
    throw DecodeError(chunk_prefix(chunks_decoded_) + error.what());
  }
  const std::uint64_t index = chunks_decoded_;
  ++chunks_decoded_;
  data_bytes_decoded_ += data.size();
  have_header_ = false;
  if (streaming_) {
    pieces_.begin(index, static_cast<std::uint32_t>(data.size()));
    pieces_.data(data);
    pieces_.end();
  } else {
    on_chunk_(index, data);
  }
  pending_.clear();  // after the handler: `data` may point into it
}

void ChunkStreamDecoder::finish() const {
  if (failed_) throw DecodeError(chunk_prefix(chunks_decoded_) + "the stream failed to decode");
  if (pending_.empty()) return;
  const std::size_t expected = have_header_ ? kChunkHeaderBytes + header_.payload_bytes : kChunkHeaderBytes;
  throw DecodeError(chunk_prefix(chunks_decoded_) + "the stream ends after " +
                    std::to_string(pending_.size() + streamed_) + " of its " + std::to_string(expected) +
                    (have_header_ ? " bytes" : " header bytes"));
}

}  // namespace hfget::xet
