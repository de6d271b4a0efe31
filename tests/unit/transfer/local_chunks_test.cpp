// SPDX-License-Identifier: MIT
// The chunks a download can copy from files already in its target: found by a term's (xorb, chunk range) in
// the recorded layouts, only where the lengths agree with the term, and only from files still as recorded.
#include "transfer/local_chunks.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "support/temp_dir.hpp"

namespace hfget::transfer {
namespace {

using test_support::TempDir;

const std::string kXorbA(64, 'a');
const std::string kXorbB(64, 'b');

xet::Term term(const std::string& xorb, std::uint32_t begin, std::uint32_t end, std::uint64_t bytes) {
  return xet::Term{xorb, begin, end, bytes, 0};
}

struct LocalChunksTest : ::testing::Test {
  TempDir dir;
  std::filesystem::path old_shard = dir / "old.safetensors";
  std::filesystem::path other = dir / "other.safetensors";

  void SetUp() override {
    std::ofstream(old_shard) << std::string(1000, 'x');
    std::ofstream(other) << std::string(300, 'y');
  }
};

TEST_F(LocalChunksTest, FindsATermInsideARecordedRunAndWhereItsChunksLie) {
  LocalChunks chunks;
  // chunks 5..7 of A: 100, 200, 300 bytes from offset 0; chunks 0..1 of B: 150, 250 from 600
  chunks.add(old_shard, {1000, {{kXorbA, 0, 5, {100, 200, 300}}, {kXorbB, 600, 0, {150, 250}}}});
  const std::optional<LocalChunks::Span> found = chunks.find(term(kXorbA, 6, 8, 500));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found->file, old_shard);
  EXPECT_EQ(found->span.offset, 100u);
  EXPECT_EQ(std::vector<std::uint32_t>(found->span.lengths.begin(), found->span.lengths.end()),
            (std::vector<std::uint32_t>{200, 300}));
  EXPECT_TRUE(chunks.find(term(kXorbB, 0, 2, 400)));
}

TEST_F(LocalChunksTest, FindsNothingWhereTheLengthsDisagreeOrNoRunHoldsEveryChunk) {
  LocalChunks chunks;
  chunks.add(old_shard, {1000, {{kXorbA, 0, 5, {100, 200, 300}}}});
  EXPECT_FALSE(chunks.find(term(kXorbA, 6, 8, 499))) << "a record or a CAS that is wrong";
  EXPECT_FALSE(chunks.find(term(kXorbA, 4, 6, 300))) << "chunk 4 was never recorded";
  EXPECT_FALSE(chunks.find(term(kXorbB, 0, 1, 100)));
}

TEST_F(LocalChunksTest, LooksInEveryFileThatHoldsTheXorb) {
  LocalChunks chunks;
  chunks.add(old_shard, {1000, {{kXorbA, 0, 0, {100}}}});
  chunks.add(other, {300, {{kXorbA, 0, 1, {150, 150}}}});
  const std::optional<LocalChunks::Span> found = chunks.find(term(kXorbA, 1, 3, 300));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found->file, other);
  EXPECT_EQ(chunks.files(), 2u);
}

TEST_F(LocalChunksTest, AForgottenFileServesNoTermAndAnotherOfTheSamePathStillDoes) {
  LocalChunks chunks;
  chunks.add(old_shard, {1000, {{kXorbA, 0, 0, {100}}}});
  chunks.add(other, {300, {{kXorbA, 0, 0, {100}}}});
  const std::optional<LocalChunks::Span> first = chunks.find(term(kXorbA, 0, 1, 100));
  ASSERT_TRUE(first.has_value());
  chunks.forget(*first);
  const std::optional<LocalChunks::Span> next = chunks.find(term(kXorbA, 0, 1, 100));
  ASSERT_TRUE(next.has_value());
  EXPECT_NE(*next->file, *first->file) << "the other file that holds the chunk";
  chunks.forget(*next);
  EXPECT_FALSE(chunks.find(term(kXorbA, 0, 1, 100)));
  // Published again at the same path (a local dir's update): the new record serves.
  chunks.add(old_shard, {1000, {{kXorbA, 0, 0, {100}}}});
  EXPECT_TRUE(chunks.find(term(kXorbA, 0, 1, 100)));
}

TEST_F(LocalChunksTest, LeavesOutAFileThatIsNotThere) {
  LocalChunks chunks;
  chunks.add(dir / "gone.safetensors", {1000, {{kXorbA, 0, 0, {100}}}});
  EXPECT_TRUE(chunks.empty());
}

}  // namespace
}  // namespace hfget::transfer
