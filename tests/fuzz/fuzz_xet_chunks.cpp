// SPDX-License-Identifier: MIT
// The bytes of a xorb range (untrusted: a presigned URL serves them) through ChunkStreamDecoder, fed in two
// pieces split where the fuzzer says and in one piece, whole chunks and in pieces (ChunkPieces, what the range
// sink uses): all must agree on every chunk and on where it fails, and every chunk handed on must be within the
// format's limits; in pieces, a chunk's data must add up to the size its begin announced.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "xet/chunk_stream.hpp"

namespace {

struct Outcome {
  std::vector<std::vector<std::byte>> chunks;
  std::optional<std::string> error;
};

Outcome decode(std::span<const std::byte> stream, std::size_t split) {
  Outcome outcome;
  hfget::xet::ChunkStreamDecoder decoder([&](std::uint64_t index, std::span<const std::byte> data) {
    HFGET_FUZZ_CHECK(index == outcome.chunks.size());
    HFGET_FUZZ_CHECK(!data.empty() && data.size() <= hfget::xet::kMaxChunkBytes);
    outcome.chunks.emplace_back(data.begin(), data.end());
  });
  try {
    decoder.feed(stream.first(split));
    decoder.feed(stream.subspan(split));
    decoder.finish();
    std::uint64_t total = 0;
    for (const auto& chunk : outcome.chunks) total += chunk.size();
    HFGET_FUZZ_CHECK(decoder.data_bytes_decoded() == total);
    HFGET_FUZZ_CHECK(decoder.chunks_decoded() == outcome.chunks.size());
  } catch (const hfget::xet::DecodeError& error) {
    outcome.error = error.what();
    HFGET_FUZZ_CHECK(outcome.error->rfind("chunk " + std::to_string(outcome.chunks.size()) + ": ", 0) == 0);
  }
  return outcome;
}

Outcome decode_in_pieces(std::span<const std::byte> stream, std::size_t split) {
  Outcome outcome;
  std::optional<std::vector<std::byte>> open;
  std::uint32_t announced = 0;
  hfget::xet::ChunkStreamDecoder decoder(
      hfget::xet::ChunkPieces{.begin =
                                  [&](std::uint64_t index, std::uint32_t data_bytes) {
                                    HFGET_FUZZ_CHECK(!open && index == outcome.chunks.size());
                                    HFGET_FUZZ_CHECK(data_bytes > 0 && data_bytes <= hfget::xet::kMaxChunkBytes);
                                    open.emplace();
                                    announced = data_bytes;
                                  },
                              .data =
                                  [&](std::span<const std::byte> data) {
                                    HFGET_FUZZ_CHECK(open && !data.empty() && open->size() + data.size() <= announced);
                                    open->insert(open->end(), data.begin(), data.end());
                                  },
                              .end =
                                  [&] {
                                    HFGET_FUZZ_CHECK(open && open->size() == announced);
                                    outcome.chunks.push_back(std::move(*open));
                                    open.reset();
                                  }});
  try {
    decoder.feed(stream.first(split));
    decoder.feed(stream.subspan(split));
    decoder.finish();
    HFGET_FUZZ_CHECK(!open);
  } catch (const hfget::xet::DecodeError& error) {
    outcome.error = error.what();
    HFGET_FUZZ_CHECK(outcome.error->rfind("chunk " + std::to_string(outcome.chunks.size()) + ": ", 0) == 0);
  }
  return outcome;
}

}  // namespace

// Input: two bytes choosing the split point (little-endian, modulo the stream's length + 1), then the stream.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t choice = data[0] | (static_cast<std::size_t>(data[1]) << 8U);
  std::vector<std::byte> stream(size - 2);
  if (!stream.empty()) std::memcpy(stream.data(), data + 2, stream.size());
  const Outcome split = decode(stream, choice % (stream.size() + 1));
  const Outcome whole = decode(stream, stream.size());
  HFGET_FUZZ_CHECK(split.chunks == whole.chunks);
  HFGET_FUZZ_CHECK(split.error.has_value() == whole.error.has_value());
  const Outcome pieces = decode_in_pieces(stream, choice % (stream.size() + 1));
  HFGET_FUZZ_CHECK(pieces.chunks == whole.chunks);
  HFGET_FUZZ_CHECK(pieces.error.has_value() == whole.error.has_value());
  return 0;
}
