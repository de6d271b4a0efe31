// SPDX-License-Identifier: MIT
// A Xet file's chunk layout: built from chunks added in any order, found again by (xorb, chunk range), written
// and read back, and a table of damaged records, each refused with its cause.
#include "xet/chunk_layout.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "xet/chunk_stream.hpp"

namespace hfget::xet {
namespace {

const std::string kXorbA(64, 'a');
const std::string kXorbB = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

// A 1000-byte file: chunks 5, 6, 7 of A (100, 200, 300 bytes), then chunks 0, 1 of B (150, 250 bytes).
ChunkLayout two_xorbs() {
  ChunkLayoutBuilder builder(1000);
  builder.add(600, kXorbB, 0, 150);  // out of order, as connections finish
  builder.add(0, kXorbA, 5, 100);
  builder.add(300, kXorbA, 7, 300);
  builder.add(750, kXorbB, 1, 250);
  builder.add(100, kXorbA, 6, 200);
  return builder.layout();
}

TEST(ChunkLayoutBuilder, MergesChunksThatFollowEachOtherInTheXorbAndTheFile) {
  const ChunkLayout layout = two_xorbs();
  ASSERT_EQ(layout.runs.size(), 2u);
  EXPECT_EQ(layout.runs[0], (ChunkRun{kXorbA, 0, 5, {100, 200, 300}}));
  EXPECT_EQ(layout.runs[1], (ChunkRun{kXorbB, 600, 0, {150, 250}}));
  EXPECT_EQ(layout.covered_bytes(), 1000u);
}

TEST(ChunkLayoutBuilder, StartsANewRunAtAGapOrASkippedChunk) {
  ChunkLayoutBuilder builder(1000);
  builder.add(0, kXorbA, 0, 100);
  builder.add(200, kXorbA, 1, 100);  // a gap in the file: the bytes between are not known
  builder.add(300, kXorbA, 3, 100);  // chunk 2 skipped: another run
  const ChunkLayout layout = builder.layout();
  ASSERT_EQ(layout.runs.size(), 3u);
  EXPECT_EQ(layout.runs[1].file_offset, 200u);
  EXPECT_EQ(layout.runs[2].chunk_begin, 3u);
}

TEST(ChunkLayoutBuilder, LeavesOutChunksPastTheFileOrOverlappingOnesAddedBefore) {
  ChunkLayoutBuilder builder(500);
  builder.add(0, kXorbA, 0, 300);
  builder.add(100, kXorbB, 9, 100);  // inside the first chunk's bytes
  builder.add(300, kXorbA, 1, 201);  // one byte past the end
  builder.add(300, kXorbA, 1, 0);    // empty
  builder.add(300, kXorbA, UINT32_MAX, 10);
  const ChunkLayout layout = builder.layout();
  ASSERT_EQ(layout.runs.size(), 1u);
  EXPECT_EQ(layout.runs[0], (ChunkRun{kXorbA, 0, 0, {300}}));
}

TEST(ChunkLayoutBuilder, TakesChunksFromManyThreads) {
  constexpr int kThreads = 4;
  constexpr std::uint32_t kChunksEach = 500;
  ChunkLayoutBuilder builder(std::uint64_t{kThreads} * kChunksEach * 10);
  std::vector<std::jthread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&builder, t] {
      for (std::uint32_t c = 0; c < kChunksEach; ++c) {
        const std::uint32_t chunk = static_cast<std::uint32_t>(t) * kChunksEach + c;
        builder.add(std::uint64_t{chunk} * 10, kXorbA, chunk, 10);
      }
    });
  }
  threads.clear();
  const ChunkLayout layout = builder.layout();
  ASSERT_EQ(layout.runs.size(), 1u);
  EXPECT_EQ(layout.runs[0].lengths.size(), std::size_t{kThreads} * kChunksEach);
}

TEST(ChunkLayout, FindsWhereAChunkRangeLiesInsideARun) {
  const ChunkLayout layout = two_xorbs();
  EXPECT_EQ(layout.find(kXorbA, 5, 8), (FileSpan{0, 600, {}}));
  EXPECT_EQ(layout.find(kXorbA, 6, 8), (FileSpan{100, 500, {}}));  // a later revision's term: a sub-range
  EXPECT_EQ(layout.find(kXorbA, 6, 7), (FileSpan{100, 200, {}}));
  EXPECT_EQ(layout.find(kXorbB, 1, 2), (FileSpan{750, 250, {}}));
}

TEST(ChunkLayout, FindsNothingOutsideTheRuns) {
  const ChunkLayout layout = two_xorbs();
  EXPECT_FALSE(layout.find(kXorbA, 4, 6));  // chunk 4 was never seen
  EXPECT_FALSE(layout.find(kXorbA, 7, 9));
  EXPECT_FALSE(layout.find(kXorbA, 6, 6));
  EXPECT_FALSE(layout.find(std::string(64, 'c'), 0, 1));
}

TEST(ChunkLayoutRecord, ReadsBackWhatItWrote) {
  const ChunkLayout layout = two_xorbs();
  const std::string record = serialize_chunk_layout(layout);
  EXPECT_EQ(parse_chunk_layout(record, 1000), layout);
  // Compact: the header, 80 bytes a run and 4 a chunk.
  EXPECT_EQ(record.size(), 32u + 2 * 80u + 5 * 4u);
}

TEST(ChunkLayoutRecord, ReadsAnEmptyLayout) {
  const ChunkLayout empty{.file_size = 7, .runs = {}};
  EXPECT_EQ(parse_chunk_layout(serialize_chunk_layout(empty), 7), empty);
}

struct Damage {
  const char* name;
  std::function<std::string(std::string)> apply;
  const char* message;
};

void set_u32(std::string& record, std::size_t at, std::uint32_t value) {
  std::string bytes;
  for (std::size_t i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  record.replace(at, bytes.size(), bytes);
}

// Offsets in the record of two_xorbs(): the header's 32 bytes (magic 16, version 4, file size 8, run count 4);
// run 0 at 32 (hash 64, offset 8, first chunk 4, count 4, then three lengths); run 1 after it.
constexpr std::size_t kRun0 = 32;
constexpr std::size_t kRun1 = kRun0 + 80 + 3 * 4;

TEST(ChunkLayoutRecord, RefusesDamagedRecordsNamingTheCause) {
  const std::vector<Damage> damages = {
      {"wrong magic", [](std::string r) { return r.replace(0, 5, "HFGET"); }, "wrong magic"},
      {"another version", [](std::string r) { return (set_u32(r, 16, 2), r); }, "version 2"},
      {"truncated", [](std::string r) { return r.substr(0, 30); }, "truncated in the run count"},
      {"a last chunk cut short", [](std::string r) { return r.substr(0, r.size() - 1); }, "more chunks than"},
      {"empty", [](std::string) { return std::string(); }, "truncated"},
      {"trailing bytes", [](std::string r) { return r + "x"; }, "bytes after the last run"},
      {"a run count the bytes cannot hold", [](std::string r) { return (set_u32(r, 28, 0xffffffff), r); },
       "more runs than the record holds"},
      {"an upper-case hash", [](std::string r) { return r.replace(kRun0, 1, "A"); }, "hash is not 64"},
      {"no chunks", [](std::string r) { return (set_u32(r, kRun1 + 76, 0), r.substr(0, kRun1 + 80)); },
       "has no chunks"},
      {"a chunk count the bytes cannot hold", [](std::string r) { return (set_u32(r, kRun1 + 76, 1u << 30), r); },
       "more chunks than the record holds"},
      {"chunk indices that overflow", [](std::string r) { return (set_u32(r, kRun1 + 72, 0xffffffff), r); },
       "chunk indices overflow"},
      {"a chunk of 0 bytes", [](std::string r) { return (set_u32(r, kRun0 + 80, 0), r); }, "a chunk of 0 bytes"},
      {"a chunk over the maximum", [](std::string r) { return (set_u32(r, kRun0 + 80, kMaxChunkBytes + 1), r); },
       "a chunk of 131073"},
      {"a run past the file's end", [](std::string r) { return (set_u32(r, kRun1 + 64, 900), r); },
       "reaches past the file's 1000 bytes"},
      {"overlapping runs", [](std::string r) { return (set_u32(r, kRun1 + 64, 599), r); },
       "overlaps the run before it"},
  };
  const std::string good = serialize_chunk_layout(two_xorbs());
  for (const Damage& damage : damages) {
    try {
      parse_chunk_layout(damage.apply(good), 1000);
      ADD_FAILURE() << damage.name << ": accepted";
    } catch (const ChunkLayoutError& error) {
      EXPECT_NE(std::string(error.what()).find(damage.message), std::string::npos)
          << damage.name << ": " << error.what();
    }
  }
}

TEST(ChunkLayoutRecord, RefusesARecordWrittenForAFileOfAnotherSize) {
  try {
    parse_chunk_layout(serialize_chunk_layout(two_xorbs()), 999);
    FAIL() << "accepted";
  } catch (const ChunkLayoutError& error) {
    EXPECT_NE(std::string(error.what()).find("a file of 1000 bytes, not 999"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace hfget::xet
