// SPDX-License-Identifier: MIT
#include "transfer/chunk_size.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hfget::transfer {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

std::vector<PlannedFile> shards(int count, std::uint64_t size) {
  std::vector<PlannedFile> plan;
  for (int i = 0; i < count; ++i) {
    PlannedFile planned;
    planned.file.path = "model-" + std::to_string(i) + ".safetensors";
    planned.file.size = size;
    plan.push_back(planned);
  }
  return plan;
}

std::uint64_t total(const std::vector<PlannedFile>& plan) {
  std::uint64_t bytes = 0;
  for (const PlannedFile& planned : plan) bytes += planned.complete ? 0 : planned.file.size;
  return bytes;
}

DownloadOptions defaults() {
  DownloadOptions options;
  options.connections = 16;
  options.max_workers = 12;
  return options;
}

TEST(ChunkSize, AChunkSizeGivenOnTheCommandLineWins) {
  DownloadOptions options = defaults();
  options.chunk_bytes = 5 * kMiB;
  const std::vector<PlannedFile> plan = shards(64, 10'000 * kMiB);
  EXPECT_EQ(chunk_size_for(options, plan, total(plan)), 5 * kMiB);
}

TEST(ChunkSize, BigShardsGetTheLargestChunks) {
  // Kimi-K2.5-like: 64 shards of ~9.8 GB. 12 open files × 9.8 GB / 32 is far above the 64 MiB cap.
  const std::vector<PlannedFile> plan = shards(64, 9'800'000'000);
  EXPECT_EQ(chunk_size_for(defaults(), plan, total(plan)), 64 * kMiB);
}

TEST(ChunkSize, OpenFilesSetTheSizeForMidSizedShards) {
  // 12 open files × 32 MiB over 2 chunks per connection (32): 12 MiB, so every connection finds one queued.
  const std::vector<PlannedFile> plan = shards(64, 32 * kMiB);
  EXPECT_EQ(chunk_size_for(defaults(), plan, total(plan)), 12 * kMiB);
}

TEST(ChunkSize, AFewBigFilesGiveEveryConnectionFourChunks) {
  // Two 256 MiB files: 512 MiB over 4 chunks for each of 16 connections = 8 MiB, so the second file does
  // not wait for the first and the tail can still be shared.
  const std::vector<PlannedFile> plan = shards(2, 256 * kMiB);
  EXPECT_EQ(chunk_size_for(defaults(), plan, total(plan)), 8 * kMiB);
}

TEST(ChunkSize, ASmallDownloadStillGetsTheSmallestChunk) {
  const std::vector<PlannedFile> plan = shards(3, 6 * kMiB);
  EXPECT_EQ(chunk_size_for(defaults(), plan, total(plan)), 4 * kMiB);
  EXPECT_EQ(chunk_size_for(defaults(), {}, 0), 4 * kMiB);
}

TEST(ChunkSize, CompleteFilesDoNotCountAsOpenFiles) {
  // 48 shards of 32 MiB still to fetch, 40 of 1 GiB complete: the open files are 32 MiB ones (12 × 32 MiB
  // / 32 = 12 MiB). Counting the complete ones would make the average file 483 MiB and the chunk 24 MiB.
  std::vector<PlannedFile> plan = shards(48, 32 * kMiB);
  for (PlannedFile& done : shards(40, 1024 * kMiB)) {
    done.complete = true;
    plan.push_back(done);
  }
  EXPECT_EQ(chunk_size_for(defaults(), plan, total(plan)), 12 * kMiB);
}

TEST(ChunkSize, FilesBelowTheSmallestChunkDoNotCountAsOpenFiles) {
  // 24 shards of 32 MiB and 40 files of 1 MiB: the average large file stays 32 MiB (12 MiB chunks);
  // counting the small ones would bring it down to 12.6 MiB and the chunk to 4.7 MiB.
  std::vector<PlannedFile> plan = shards(24, 32 * kMiB);
  for (PlannedFile& small : shards(40, kMiB)) plan.push_back(small);
  EXPECT_EQ(chunk_size_for(defaults(), plan, total(plan)), 12 * kMiB);
}

TEST(ChunkSize, ConnectionsDivideTheOpenFiles) {
  DownloadOptions options = defaults();
  options.connections = 32;
  const std::vector<PlannedFile> plan = shards(64, 64 * kMiB);
  // 12 × 64 MiB / 64 = 12 MiB; with 16 connections it is 24 MiB.
  EXPECT_EQ(chunk_size_for(options, plan, total(plan)), 12 * kMiB);
  EXPECT_EQ(chunk_size_for(defaults(), plan, total(plan)), 24 * kMiB);
}

TEST(ChunkSize, TheTailIsTwoChunksPerConnectionUnlessTheChunkSizeWasGiven) {
  DownloadOptions options = defaults();
  EXPECT_EQ(tail_size_for(options, 12 * kMiB), 2 * 16 * 12 * kMiB);
  options.connections.reset();  // the adaptive count cuts for 32
  EXPECT_EQ(tail_size_for(options, 12 * kMiB), 2 * 32 * 12 * kMiB);
  options.chunk_bytes = 16 * kMiB;
  EXPECT_EQ(tail_size_for(options, 16 * kMiB), 0U) << "--chunk-size: every chunk is the size asked for";
}

}  // namespace
}  // namespace hfget::transfer
