// SPDX-License-Identifier: MIT
#include "verify/file_hashing.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <thread>

#include "crypto/content_hasher.hpp"
#include "util/unique_fd.hpp"

namespace hfget::verify {
namespace {

// Large enough that syscalls and page-cache lookups vanish next to SHA-256 (≈1.5 GB/s per core), small
// enough that N threads stay far below the memory budget.
constexpr std::size_t kReadBlockBytes = 4 << 20;

HashOutcome hash_one(const HashJob& job, std::vector<std::byte>& buffer, std::uint64_t& bytes_read,
                     const std::stop_token& stop) {
  crypto::ContentHasher hasher(job.expected);
  HashOutcome outcome;
  outcome.algorithm = hasher.algorithm();
  util::UniqueFd fd(::open(job.path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    outcome.error = std::strerror(errno);
    return outcome;
  }
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  while (true) {
    if (stop.stop_requested()) {
      outcome.error = "interrupted";
      return outcome;
    }
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      outcome.error = std::strerror(errno);
      return outcome;
    }
    if (n == 0) break;
    hasher.update(std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(n)));
    bytes_read += static_cast<std::uint64_t>(n);
  }
  outcome.actual = hasher.finish_hex();
  outcome.matches = outcome.actual == hasher.expected();
  return outcome;
}

}  // namespace

std::vector<HashOutcome> hash_files(const std::vector<HashJob>& jobs, unsigned threads, std::uint64_t& bytes_hashed,
                                    std::stop_token stop) {
  std::vector<std::size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return jobs[a].expected.size > jobs[b].expected.size; });

  std::vector<HashOutcome> outcomes(jobs.size());  // slot i is written only by the thread that took job i
  std::atomic<std::size_t> next{0};
  std::atomic<std::uint64_t> total{0};
  const auto worker = [&] {
    std::vector<std::byte> buffer(kReadBlockBytes);
    std::uint64_t read_here = 0;
    for (std::size_t k = next++; k < order.size(); k = next++) {
      outcomes[order[k]] = hash_one(jobs[order[k]], buffer, read_here, stop);
    }
    total += read_here;
  };
  const std::size_t count = std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(jobs.size(), 1));
  {
    std::vector<std::jthread> workers;
    for (std::size_t i = 0; i < count; ++i) workers.emplace_back(worker);
    for (std::jthread& thread : workers) thread.join();
  }
  bytes_hashed = total;
  return outcomes;
}

}  // namespace hfget::verify
