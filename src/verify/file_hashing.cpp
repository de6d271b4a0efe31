// SPDX-License-Identifier: MIT
#include "verify/file_hashing.hpp"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <thread>

#include "crypto/content_hasher.hpp"
#include "hfget/error.hpp"
#include "io/file_reads.hpp"

namespace hfget::verify {
namespace {

HashOutcome hash_one(const HashJob& job, std::uint64_t& bytes_read, const std::stop_token& stop,
                     VerifyProgress* progress) {
  crypto::ContentHasher hasher(job.expected);
  HashOutcome outcome;
  outcome.algorithm = hasher.algorithm();
  try {
    // The consumer may run under a SIGBUS guard (a mapped file truncated under us), so it keeps no object
    // with a destructor alive while it hashes.
    io::read_file(job.path, [&](std::span<const std::byte> bytes) {
      if (stop.stop_requested()) throw Error(ErrorCode::kInterrupted, "interrupted");
      hasher.update(bytes);
      bytes_read += bytes.size();
      if (progress != nullptr) progress->bytes_hashed.fetch_add(bytes.size(), std::memory_order_relaxed);
    });
  } catch (const Error& error) {
    outcome.error = error.what();
    return outcome;
  } catch (const std::exception& error) {  // out of memory, say: this file's outcome, not std::terminate
    outcome.error = Error(ErrorCode::kInternal, error.what()).what();
    return outcome;
  }
  outcome.actual = hasher.finish_hex();
  outcome.matches = outcome.actual == hasher.expected();
  return outcome;
}

}  // namespace

std::vector<HashOutcome> hash_files(const std::vector<HashJob>& jobs, unsigned threads, std::uint64_t& bytes_hashed,
                                    std::stop_token stop, VerifyProgress* progress) {
  std::vector<std::size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return jobs[a].expected.size > jobs[b].expected.size; });

  std::vector<HashOutcome> outcomes(jobs.size());  // slot i is written only by the thread that took job i
  std::atomic<std::size_t> next{0};
  std::atomic<std::uint64_t> total{0};
  const auto worker = [&] {
    std::uint64_t read_here = 0;
    for (std::size_t k = next++; k < order.size(); k = next++) {
      outcomes[order[k]] = hash_one(jobs[order[k]], read_here, stop, progress);
      if (progress != nullptr) ++progress->files_hashed;
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
