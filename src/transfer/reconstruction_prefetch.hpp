// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <semaphore>
#include <span>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "xet/reconstruction.hpp"

namespace hfget::transfer {

/// Reconstructions asked ahead of time. Over Xet a range's first xorb byte waits for a round trip to the CAS
/// (its reconstruction); the bridge's ranges go straight to the CDN. Once a connection has planned its range,
/// the ranges the scheduler will hand out next in the same file are known (the queued bytes after it, cut as
/// the scheduler cuts them), so their reconstructions are asked here, on threads of their own, while the
/// current range downloads (XetFetcher::ask_ahead says how many); the connections that take those ranges find
/// their plans ready. A plan is used only for exactly the range it was asked for,
/// and is checked like any other; one not ready is asked again by the connection itself (one still being asked
/// is waited for: that is at most the round trip it would have made), so nothing waits behind the queue.
/// Bounded: at most kMaxPlans ranges are remembered, the oldest forgotten first (a plan is a few KB; the
/// connections' next ranges and the next files' first ones come to about 64 with 32 connections).
///
/// Several askers, each a thread with a transport of its own: one asker answers one plan per CAS round trip,
/// and with many connections the plans they queue come faster than that. How many are needed is the ranges
/// taken per second times the CAS's round trip, which only the download shows: so they start at kMinAskers
/// (each holds a CAS connection of its own, and a CAS that answers in a millisecond needs no more) and
/// another is started, up to kMaxAskers, whenever a plan is queued while every asker is busy. On the GPU server
/// (32 connections capped at 65 MB/s, the CAS 30 ms away) four askers were busy for the whole download and
/// 161 of 398 ranges found their plan not yet asked: 5.6 s of the connections' 45 s went to waiting for
/// plans (docs/benchmarks.md, "The askers were the queue"). What askers cannot hide is a round trip longer
/// than a range lasts.
class ReconstructionPrefetch {
 public:
  static constexpr std::size_t kMaxPlans = 128;
  static constexpr std::size_t kMinAskers = 4;
  static constexpr std::size_t kMaxAskers = 16;
  /// Asks the CAS for the plan of bytes [first, last] of a file; nullopt when it could not be had.
  using Ask = std::function<std::optional<xet::Reconstruction>(const std::string& xet_hash, std::uint64_t first,
                                                               std::uint64_t last)>;
  /// `make_ask` runs on each asker's thread, once, with that thread's stop token (a transport of its own).
  /// `min_askers` start at once; more start as plans queue up, up to `max_askers`.
  explicit ReconstructionPrefetch(std::function<Ask(std::stop_token)> make_ask, std::size_t min_askers = kMinAskers,
                                  std::size_t max_askers = kMaxAskers);
  ~ReconstructionPrefetch();  // stops the askers; a request in flight is cancelled through its stop token
  ReconstructionPrefetch(const ReconstructionPrefetch&) = delete;
  ReconstructionPrefetch& operator=(const ReconstructionPrefetch&) = delete;

  struct Wanted {  // bytes [first, last] of a file
    std::string xet_hash;
    std::uint64_t first = 0;
    std::uint64_t last = 0;
  };
  /// Queues each range not already known, under one lock: a connection names a dozen with each range it starts.
  void ask_ahead(std::span<const Wanted> ranges);
  /// Whether a plan of the file starting at byte `first` is queued, being asked or ready: the range before it
  /// then keeps its end, so that the range the scheduler cuts there is the one planned.
  bool asked_from(const std::string& xet_hash, std::uint64_t first) const;
  /// The plan asked ahead for exactly [first, last], waiting while it is being asked; nullopt when none was
  /// asked, it is still queued (then it is not asked any more), or it failed.
  std::optional<xet::Reconstruction> take(const std::string& xet_hash, std::uint64_t first, std::uint64_t last,
                                          const std::stop_token& stop);
  /// What take() found so far: a plan ready, one being asked (waited for), one still queued (left to the
  /// connection), none for the range; and how many plans it handed over (ready ones, and waited ones that came
  /// back ready). Counted per take, so a range retried after a failure counts again.
  struct Takes {
    std::size_t ready = 0;
    std::size_t waited = 0;
    std::size_t queued = 0;
    std::size_t missing = 0;
    std::size_t used = 0;
    std::uint64_t waited_ns = 0;  // spent waiting for plans being asked
  };
  Takes takes() const;

 private:
  struct Entry {
    std::string xet_hash;
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    enum class State { kQueued, kAsking, kReady, kFailed } state = State::kQueued;
    std::optional<xet::Reconstruction> plan;
    std::uint64_t id = 0;
  };
  std::deque<Entry>::iterator find(const std::string& xet_hash, std::uint64_t first, std::uint64_t last);
  void run(const std::stop_token& stop);
  void start_asker();  // under askers_mutex_, or in the constructor

  mutable std::mutex mutex_;
  // A plan queued wakes one asker and a plan answered wakes only the connections waiting for one. With a
  // single condition each plan queued woke every asker and every waiting connection, all to take the lock in
  // turn. The askers wait on a semaphore, not a condition: a connection queues its plans just before its
  // next xorb GET, and on the 2-core machine a condition's notify_one held it there for over 0.5 ms ~60 times
  // a run (5-60 ms, median 15); a semaphore's release ~20 times a run (median 6 ms): it is an atomic add, and
  // a futex wake only while an asker sleeps, where the condition also takes a mutex of its own.
  // Permits may outnumber queued plans (a connection took its plan still queued): an asker that finds none
  // waits again.
  std::counting_semaphore<> queued_{0};   // a permit per entry queued: askers wait on it
  std::condition_variable_any answered_;  // an entry left kAsking: take() waits on it
  std::deque<Entry> entries_;             // oldest first
  std::uint64_t next_id_ = 0;
  Takes takes_;
  const std::function<Ask(std::stop_token)> make_ask_;
  const std::size_t max_askers_;
  std::mutex askers_mutex_;                  // guards askers_ (never mutex_: see ask_ahead)
  std::atomic<std::size_t> asker_count_{0};  // askers_.size(), read without askers_mutex_
  std::vector<std::jthread> askers_;         // last: started once the members they use exist, stopped and joined first
};

}  // namespace hfget::transfer
