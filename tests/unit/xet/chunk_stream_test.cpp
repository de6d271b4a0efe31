// SPDX-License-Identifier: MIT
// The Xet chunk format: headers, each compression scheme, the streaming decoder fed in pieces of every size,
// and a real xorb written by @huggingface/hub's Xet writer (tests/fixtures/xet/README.md).
#include "xet/chunk_stream.hpp"

#include <gtest/gtest.h>
#include <lz4frame.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

namespace hfget::xet {
namespace {

using Bytes = std::vector<std::byte>;

Bytes bytes_of(const std::string& text) {
  Bytes out(text.size());
  std::memcpy(out.data(), text.data(), text.size());
  return out;
}

Bytes header_bytes(std::uint8_t version, std::uint32_t payload, std::uint8_t scheme, std::uint32_t data) {
  const auto b = [](std::uint32_t value, unsigned shift) { return static_cast<std::byte>((value >> shift) & 0xffU); };
  return {static_cast<std::byte>(version), b(payload, 0), b(payload, 8), b(payload, 16),
          static_cast<std::byte>(scheme),  b(data, 0),    b(data, 8),    b(data, 16)};
}

ChunkHeader parse(const Bytes& bytes) {
  return parse_chunk_header(std::span<const std::byte, kChunkHeaderBytes>(bytes.data(), kChunkHeaderBytes));
}

Bytes lz4_frame(const Bytes& data) {
  Bytes frame(LZ4F_compressFrameBound(data.size(), nullptr));
  const std::size_t size = LZ4F_compressFrame(frame.data(), frame.size(), data.data(), data.size(), nullptr);
  EXPECT_FALSE(LZ4F_isError(size));
  frame.resize(size);
  return frame;
}

// Byte i of the data goes to plane i % 4; the planes are concatenated (the writer's side of BG4).
Bytes split_planes(const Bytes& data) {
  Bytes planes;
  for (std::size_t plane = 0; plane < 4; ++plane) {
    for (std::size_t i = plane; i < data.size(); i += 4) planes.push_back(data[i]);
  }
  return planes;
}

Bytes sample_data(std::size_t size) {
  Bytes data(size);
  for (std::size_t i = 0; i < size; ++i) data[i] = static_cast<std::byte>((i * 31 + i / 97) % 251);
  return data;
}

Bytes serialized_chunk(Compression scheme, const Bytes& data) {
  Bytes payload = scheme == Compression::kNone  ? data
                  : scheme == Compression::kLz4 ? lz4_frame(data)
                                                : lz4_frame(split_planes(data));
  Bytes chunk = header_bytes(0, static_cast<std::uint32_t>(payload.size()), static_cast<std::uint8_t>(scheme),
                             static_cast<std::uint32_t>(data.size()));
  chunk.insert(chunk.end(), payload.begin(), payload.end());
  return chunk;
}

TEST(XetChunkHeader, ReadsEveryField) {
  const ChunkHeader header = parse(header_bytes(0, 0x012345, 2, 0x01fedc));
  EXPECT_EQ(header.payload_bytes, 0x012345U);
  EXPECT_EQ(header.compression, Compression::kByteGrouping4Lz4);
  EXPECT_EQ(header.data_bytes, 0x01fedcU);
  EXPECT_EQ(parse(header_bytes(0, 10, 1, 20)).compression, Compression::kLz4);
  EXPECT_EQ(parse(header_bytes(0, 7, 0, 7)).compression, Compression::kNone);
  EXPECT_EQ(parse(header_bytes(0, kMaxPayloadBytes, 1, kMaxChunkBytes)).payload_bytes, kMaxPayloadBytes);
}

TEST(XetChunkHeader, RejectsEachBadField) {
  struct Case {
    const char* what;
    Bytes header;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"version 1", header_bytes(1, 10, 1, 20), "version 1"},
      {"scheme 3", header_bytes(0, 10, 3, 20), "scheme 3"},
      {"empty payload", header_bytes(0, 0, 1, 20), "empty"},
      {"empty data", header_bytes(0, 10, 1, 0), "empty"},
      {"data over 128 KiB", header_bytes(0, 10, 1, kMaxChunkBytes + 1), "maximum"},
      {"payload over the cap", header_bytes(0, kMaxPayloadBytes + 1, 1, 20), "maximum"},
      {"stored sizes differ", header_bytes(0, 10, 0, 11), "stored"},
  };
  for (const Case& c : cases) {
    try {
      parse(c.header);
      ADD_FAILURE() << c.what << " was accepted";
    } catch (const DecodeError& error) {
      EXPECT_NE(std::string(error.what()).find(c.message), std::string::npos) << c.what << ": " << error.what();
    }
  }
}

TEST(XetChunkDecode, EachSchemeRoundTrips) {
  for (const std::size_t size : std::vector<std::size_t>{1, 2, 3, 4, 5, 1000, 65537, 131071, 131072}) {
    const Bytes data = sample_data(size);
    for (const Compression scheme : {Compression::kNone, Compression::kLz4, Compression::kByteGrouping4Lz4}) {
      const Bytes chunk = serialized_chunk(scheme, data);
      const Bytes head(chunk.begin(), chunk.begin() + kChunkHeaderBytes);
      Bytes out;
      decode_chunk(parse(head), std::span(chunk).subspan(kChunkHeaderBytes), out);
      EXPECT_EQ(out, data) << "size " << size << " scheme " << static_cast<int>(scheme);
    }
  }
}

TEST(XetChunkDecode, RejectsWrongLengthsAndCorruptFrames) {
  const Bytes data = sample_data(5000);
  const Bytes frame = lz4_frame(data);
  const auto header = [&](std::size_t payload, std::size_t size) {
    return ChunkHeader{static_cast<std::uint32_t>(payload), Compression::kLz4, static_cast<std::uint32_t>(size)};
  };
  Bytes out;
  EXPECT_THROW(decode_chunk(header(frame.size(), 4999), frame, out), DecodeError);      // decodes to more
  EXPECT_THROW(decode_chunk(header(frame.size(), 5001), frame, out), DecodeError);      // decodes to less
  EXPECT_THROW(decode_chunk(header(frame.size() + 1, 5000), frame, out), DecodeError);  // payload size differs
  Bytes trailing = frame;
  trailing.push_back(std::byte{0});
  EXPECT_THROW(decode_chunk(header(trailing.size(), 5000), trailing, out), DecodeError);
  const Bytes truncated(frame.begin(), frame.end() - 5);
  EXPECT_THROW(decode_chunk(header(truncated.size(), 5000), truncated, out), DecodeError);
  Bytes corrupt = frame;
  corrupt[0] = std::byte{0x00};  // the frame's magic number
  EXPECT_THROW(decode_chunk(header(corrupt.size(), 5000), corrupt, out), DecodeError);
  const Bytes two_frames = [&] {
    Bytes both = lz4_frame(sample_data(2500));
    const Bytes second = lz4_frame(sample_data(2500));
    both.insert(both.end(), second.begin(), second.end());
    return both;
  }();
  EXPECT_THROW(decode_chunk(header(two_frames.size(), 5000), two_frames, out), DecodeError);
}

struct Collected {
  std::vector<Bytes> chunks;
  ChunkStreamDecoder decoder{[this](std::uint64_t index, std::span<const std::byte> data) {
    EXPECT_EQ(index, chunks.size());
    chunks.emplace_back(data.begin(), data.end());
  }};
};

Bytes three_chunk_stream(std::vector<Bytes>& datas) {
  datas = {sample_data(70000), sample_data(3), sample_data(131072)};
  Bytes stream;
  const std::array schemes{Compression::kLz4, Compression::kNone, Compression::kByteGrouping4Lz4};
  for (std::size_t i = 0; i < datas.size(); ++i) {
    const Bytes chunk = serialized_chunk(schemes[i], datas[i]);
    stream.insert(stream.end(), chunk.begin(), chunk.end());
  }
  return stream;
}

TEST(XetChunkStream, DecodesInOnePieceAndByteByByte) {
  std::vector<Bytes> datas;
  const Bytes stream = three_chunk_stream(datas);
  Collected whole;
  whole.decoder.feed(stream);
  whole.decoder.finish();
  EXPECT_EQ(whole.chunks, datas);
  EXPECT_EQ(whole.decoder.chunks_decoded(), 3U);
  EXPECT_EQ(whole.decoder.data_bytes_decoded(), 70000U + 3U + 131072U);

  Collected bytewise;
  for (const std::byte& b : stream) bytewise.decoder.feed(std::span(&b, 1));
  bytewise.decoder.finish();
  EXPECT_EQ(bytewise.chunks, datas);

  Collected uneven;
  for (std::size_t at = 0, step = 1; at < stream.size(); at += step, step = step * 3 + 1) {
    uneven.decoder.feed(std::span(stream).subspan(at, std::min(step, stream.size() - at)));
  }
  uneven.decoder.finish();
  EXPECT_EQ(uneven.chunks, datas);
}

TEST(XetChunkStream, TruncatedStreamFailsAtFinish) {
  std::vector<Bytes> datas;
  const Bytes stream = three_chunk_stream(datas);
  for (const std::size_t cut : {std::size_t{3}, std::size_t{12}, stream.size() - 1}) {
    Collected collected;
    collected.decoder.feed(std::span(stream).first(cut));
    try {
      collected.decoder.finish();
      ADD_FAILURE() << "a stream cut at " << cut << " finished";
    } catch (const DecodeError& error) {
      EXPECT_NE(std::string(error.what()).find("ends after"), std::string::npos) << error.what();
    }
  }
}

TEST(XetChunkStream, BadChunkNamesItsIndexAndStopsTheDecoder) {
  std::vector<Bytes> datas;
  Bytes stream = three_chunk_stream(datas);
  const std::size_t second = serialized_chunk(Compression::kLz4, datas[0]).size();
  stream[second + 5] = std::byte{4};  // the stored chunk now claims 4 bytes of data for 3 of payload
  Collected collected;
  try {
    collected.decoder.feed(stream);
    ADD_FAILURE() << "accepted";
  } catch (const DecodeError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("chunk 1: ", 0), 0U) << error.what();
  }
  EXPECT_EQ(collected.chunks.size(), 1U);
  EXPECT_THROW(collected.decoder.feed(std::span(stream).first(1)), DecodeError);
  EXPECT_THROW(collected.decoder.finish(), DecodeError);
}

TEST(XetChunkStream, WrongDecodedLengthIsRejected) {
  Bytes chunk = serialized_chunk(Compression::kLz4, sample_data(1000));
  chunk[5] = std::byte{0xe9};  // data size 1001 (0x3e9)
  Collected collected;
  EXPECT_THROW(collected.decoder.feed(chunk), DecodeError);
  EXPECT_TRUE(collected.chunks.empty());
}

Bytes read_fixture(const std::string& name) {
  std::ifstream in(std::string(HFGET_SOURCE_DIR) + "/tests/fixtures/xet/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return bytes_of(text);
}

// A xorb from a real writer (@huggingface/hub's createXorbs): every scheme it chose decodes to the input.
TEST(XetChunkStream, DecodesARealWritersXorb) {
  const Bytes xorb = read_fixture("xorb.bin");
  const Bytes input = read_fixture("input.bin");
  const Bytes listing = read_fixture("chunks.json");
  const auto chunks = nlohmann::json::parse(listing.begin(), listing.end()).at("chunks");
  Bytes decoded;
  std::vector<int> schemes;
  Collected collected;
  collected.decoder.feed(xorb);
  collected.decoder.finish();
  ASSERT_EQ(collected.chunks.size(), chunks.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_EQ(collected.chunks[i].size(), chunks[i].at("data_bytes").get<std::size_t>());
    decoded.insert(decoded.end(), collected.chunks[i].begin(), collected.chunks[i].end());
    schemes.push_back(chunks[i].at("scheme").get<int>());
  }
  EXPECT_EQ(decoded, input);
  for (const int scheme : {0, 1, 2}) {
    EXPECT_NE(std::find(schemes.begin(), schemes.end(), scheme), schemes.end()) << "no chunk of scheme " << scheme;
  }
  // A range of it, as a presigned URL serves one: from the second chunk's header to the end of the fourth.
  const std::size_t begin = chunks[1].at("offset").get<std::size_t>();
  const std::size_t end =
      chunks[3].at("offset").get<std::size_t>() + chunks[3].at("serialized_bytes").get<std::size_t>();
  Collected range;
  for (std::size_t at = begin; at < end; at += 1000)
    range.decoder.feed(std::span(xorb).subspan(at, std::min<std::size_t>(1000, end - at)));
  range.decoder.finish();
  ASSERT_EQ(range.chunks.size(), 3U);
  EXPECT_EQ(range.chunks[0], collected.chunks[1]);
  EXPECT_EQ(range.chunks[2], collected.chunks[3]);
}

// ChunkPieces: what the Xet range sink uses. A stored chunk comes in the pieces it arrived in (no copy of it
// is gathered), a compressed one whole; either way each chunk's pieces add up to its data.
struct Pieces {
  std::vector<Bytes> chunks;
  std::vector<std::size_t> piece_counts;
  bool open = false;
  ChunkStreamDecoder decoder{ChunkPieces{.begin =
                                             [this](std::uint64_t index, std::uint32_t data_bytes) {
                                               EXPECT_FALSE(open);
                                               EXPECT_EQ(index, chunks.size());
                                               chunks.emplace_back().reserve(data_bytes);
                                               piece_counts.push_back(0);
                                               open = true;
                                             },
                                         .data =
                                             [this](std::span<const std::byte> data) {
                                               EXPECT_TRUE(open);
                                               chunks.back().insert(chunks.back().end(), data.begin(), data.end());
                                               ++piece_counts.back();
                                             },
                                         .end =
                                             [this] {
                                               EXPECT_TRUE(open);
                                               open = false;
                                             }}};
};

TEST(XetChunkStream, PiecesHandAStoredChunkOnAsItArrivesAndACompressedOneWhole) {
  std::vector<Bytes> datas;
  const Bytes stream = three_chunk_stream(datas);  // LZ4, stored (3 bytes), ByteGrouping4-LZ4
  Pieces whole;
  whole.decoder.feed(stream);
  whole.decoder.finish();
  EXPECT_EQ(whole.chunks, datas);
  EXPECT_EQ(whole.piece_counts, (std::vector<std::size_t>{1, 1, 1}));

  Pieces bytewise;
  for (const std::byte& b : stream) bytewise.decoder.feed(std::span(&b, 1));
  bytewise.decoder.finish();
  EXPECT_EQ(bytewise.chunks, datas);
  EXPECT_EQ(bytewise.piece_counts, (std::vector<std::size_t>{1, 3, 1})) << "the stored chunk, byte by byte";

  const Bytes big = sample_data(100000);
  const Bytes stored = serialized_chunk(Compression::kNone, big);
  Pieces split;
  split.decoder.feed(std::span(stored).first(5000));
  EXPECT_TRUE(split.open) << "begun once its header is checked";
  EXPECT_EQ(split.chunks.at(0).size(), 5000U - kChunkHeaderBytes) << "what arrived is handed on at once";
  split.decoder.feed(std::span(stored).subspan(5000));
  split.decoder.finish();
  EXPECT_FALSE(split.open);
  EXPECT_EQ(split.chunks.at(0), big);
  EXPECT_EQ(split.decoder.data_bytes_decoded(), big.size());
}

TEST(XetChunkStream, PiecesOfAStoredChunkCutShortFailAtFinish) {
  const Bytes stored = serialized_chunk(Compression::kNone, sample_data(100000));
  Pieces cut;
  cut.decoder.feed(std::span(stored).first(stored.size() - 1));
  try {
    cut.decoder.finish();
    ADD_FAILURE() << "a stored chunk one byte short finished";
  } catch (const DecodeError& error) {
    EXPECT_NE(std::string(error.what()).find("ends after 100007 of its 100008 bytes"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace hfget::xet
