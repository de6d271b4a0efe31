// SPDX-License-Identifier: MIT
// Which way of reading a file into a hash costs less CPU differs from machine to machine by more than any
// other choice in `hfget verify`. Hashing through a mapping skips pread's copy into a buffer, but SHA-256
// then reads every 4 KiB page through the process's own page tables. On one VM that was 9% faster than pread;
// on another (same kernel, another host) 45% slower, until the reader touched the pages ahead of the hash
// (file_reads.cpp), which made mapping the faster there too (docs/benchmarks.md). Two hosts are not every
// host, and the difference is large either way, so the reader measures both on the files at hand and keeps
// the cheaper one.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

namespace hfget::io {

enum class ReadMethod {
  kMapped,  // mmap a window and hand the page cache's bytes to the consumer
  kCopied,  // pread the window, block by block, into a small buffer that stays in the CPU's cache
};

/// Picks the read method for each window of a file and learns from the CPU time each window cost.
/// Thread-safe: the hashing threads of one run share one chooser, so each measures for all.
///
/// Policy: until both methods have a measured window, alternate them. Then take the one with the lower CPU
/// time per byte (an average that leans to recent windows), and every `kRecheckEvery`-th window try the other
/// one again, so that a change (a cold cache turning warm, a file held in larger folios) is noticed. Costs a
/// few percent of one window per recheck when the methods differ, nothing when they do not.
class ReadMethodChooser {
 public:
  static constexpr std::uint64_t kRecheckEvery = 64;
  /// Shorter windows are copied and not timed: a mapping's fixed costs (the call, a fault, the unmap) are more
  /// than a short copy, and would say more about the window than about the method.
  static constexpr std::uint64_t kMeasuredWindowBytes = 1 << 20;

  ReadMethodChooser() = default;
  /// Always `method`, measuring nothing: for tests, and to take either method out of a comparison.
  explicit ReadMethodChooser(ReadMethod method) : fixed_(method) {}
  ReadMethodChooser(const ReadMethodChooser&) = delete;
  ReadMethodChooser& operator=(const ReadMethodChooser&) = delete;

  /// The one every caller that does not bring its own shares, so that what one file taught serves the next.
  static ReadMethodChooser& process_wide();

  /// The method for the next window, `window_bytes` long.
  ReadMethod choose(std::uint64_t window_bytes);
  /// What reading (and consuming) a window of `bytes` with `method` cost in this thread's CPU time.
  void record(ReadMethod method, std::uint64_t bytes, std::chrono::nanoseconds cpu_time);

 private:
  struct Cost {
    std::uint64_t tries = 0;
    std::optional<double> nanoseconds_per_byte;
  };
  Cost& cost(ReadMethod method) { return costs_[static_cast<std::size_t>(method)]; }

  std::optional<ReadMethod> fixed_;
  std::mutex mutex_;
  std::array<Cost, 2> costs_{};
  std::uint64_t choices_ = 0;
};

}  // namespace hfget::io
