// SPDX-License-Identifier: MIT
#include "transfer/reconstruction_prefetch.hpp"

#include <algorithm>
#include <chrono>
#include <system_error>
#include <utility>

namespace hfget::transfer {

ReconstructionPrefetch::ReconstructionPrefetch(std::function<Ask(std::stop_token)> make_ask, std::size_t min_askers,
                                               std::size_t max_askers)
    : make_ask_(std::move(make_ask)), max_askers_(std::max<std::size_t>({max_askers, min_askers, 1})) {
  askers_.reserve(max_askers_);
  for (std::size_t i = 0; i < std::max<std::size_t>(min_askers, 1); ++i) start_asker();
}

void ReconstructionPrefetch::start_asker() {  // under askers_mutex_, or in the constructor
  askers_.emplace_back([this](std::stop_token stop) { run(stop); });
  asker_count_ = askers_.size();
}

ReconstructionPrefetch::~ReconstructionPrefetch() {
  const std::lock_guard lock(askers_mutex_);  // no ask_ahead() runs by now; this only keeps the rule simple
  for (std::jthread& asker : askers_) asker.request_stop();
  queued_.release(static_cast<std::ptrdiff_t>(askers_.size()));
  answered_.notify_all();
  for (std::jthread& asker : askers_) {
    if (asker.joinable()) asker.join();
  }
}

std::deque<ReconstructionPrefetch::Entry>::iterator ReconstructionPrefetch::find(const std::string& xet_hash,
                                                                                 std::uint64_t first,
                                                                                 std::uint64_t last) {
  return std::find_if(entries_.begin(), entries_.end(), [&](const Entry& entry) {
    return entry.first == first && entry.last == last && entry.xet_hash == xet_hash;
  });
}

void ReconstructionPrefetch::ask_ahead(std::span<const Wanted> ranges) {
  std::size_t added = 0;
  std::size_t askers_wanted = 0;
  {
    const std::lock_guard lock(mutex_);
    for (const Wanted& range : ranges) {
      if (find(range.xet_hash, range.first, range.last) != entries_.end()) continue;
      // Full: the oldest plan not being asked is forgotten (a range no connection took as it was cut).
      if (entries_.size() >= kMaxPlans) {
        const auto oldest = std::find_if(entries_.begin(), entries_.end(),
                                         [](const Entry& entry) { return entry.state != Entry::State::kAsking; });
        if (oldest == entries_.end()) break;
        entries_.erase(oldest);
      }
      Entry& entry = entries_.emplace_back();
      entry.xet_hash = range.xet_hash;
      entry.first = range.first;
      entry.last = range.last;
      entry.id = next_id_++;
      ++added;
    }
    if (added == 0) return;
    // More plans waiting than askers free to ask them: the CAS is further away than the askers so far can
    // cover, and the queued plans would come after the connections that need them.
    const auto count = [this](Entry::State state) {
      return static_cast<std::size_t>(
          std::count_if(entries_.begin(), entries_.end(), [state](const Entry& e) { return e.state == state; }));
    };
    askers_wanted = count(Entry::State::kQueued) + count(Entry::State::kAsking);
  }
  queued_.release(static_cast<std::ptrdiff_t>(added));
  // Started outside mutex_: a thread's start (its stack mapped, under the process's memory-map lock, which
  // every page fault of the download also takes) would hold up every connection's take() and ask_ahead().
  askers_wanted = std::min(askers_wanted, max_askers_);
  if (asker_count_ >= askers_wanted) return;  // the steady state: no lock
  const std::lock_guard lock(askers_mutex_);
  while (askers_.size() < askers_wanted) {
    try {
      start_asker();
    } catch (const std::system_error&) {  // no thread to be had: the askers there are go on
      break;
    }
  }
}

bool ReconstructionPrefetch::asked_from(const std::string& xet_hash, std::uint64_t first) const {
  const std::lock_guard lock(mutex_);
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& entry) {
    return entry.first == first && entry.state != Entry::State::kFailed && entry.xet_hash == xet_hash;
  });
}

std::optional<xet::Reconstruction> ReconstructionPrefetch::take(const std::string& xet_hash, std::uint64_t first,
                                                                std::uint64_t last, const std::stop_token& stop) {
  std::unique_lock lock(mutex_);
  auto entry = find(xet_hash, first, last);
  if (entry == entries_.end()) {
    ++takes_.missing;
    return std::nullopt;
  }
  const std::uint64_t id = entry->id;
  ++(entry->state == Entry::State::kReady    ? takes_.ready
     : entry->state == Entry::State::kAsking ? takes_.waited
                                             : takes_.queued);
  // Being asked: the answer is at most the round trip away that asking it again would cost.
  const auto waiting_since = std::chrono::steady_clock::now();
  answered_.wait(lock, stop, [&] {
    entry = std::find_if(entries_.begin(), entries_.end(), [id](const Entry& e) { return e.id == id; });
    return entry == entries_.end() || entry->state != Entry::State::kAsking;
  });
  takes_.waited_ns += static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - waiting_since).count());
  if (entry == entries_.end() || entry->state == Entry::State::kAsking) return std::nullopt;
  std::optional<xet::Reconstruction> plan;
  if (entry->state == Entry::State::kReady) {
    plan = std::move(entry->plan);
    ++takes_.used;
  }
  entries_.erase(entry);
  return plan;
}

ReconstructionPrefetch::Takes ReconstructionPrefetch::takes() const {
  const std::lock_guard lock(mutex_);
  return takes_;
}

void ReconstructionPrefetch::run(const std::stop_token& stop) {
  Ask ask;
  try {
    ask = make_ask_(stop);  // a transport of its own: curl_easy_init can fail, and an exception here would end
  } catch (...) {           // the process (std::terminate); without it the connections ask for themselves
  }
  std::unique_lock lock(mutex_, std::defer_lock);
  while (!stop.stop_requested()) {
    queued_.acquire();
    if (stop.stop_requested()) break;
    lock.lock();
    const auto queued = std::find_if(entries_.begin(), entries_.end(),
                                     [](const Entry& entry) { return entry.state == Entry::State::kQueued; });
    if (queued == entries_.end()) {
      lock.unlock();
      continue;
    }
    queued->state = Entry::State::kAsking;
    const std::uint64_t id = queued->id;
    const std::string xet_hash = queued->xet_hash;
    const std::uint64_t first = queued->first;
    const std::uint64_t last = queued->last;
    lock.unlock();
    std::optional<xet::Reconstruction> plan;
    try {
      if (ask) plan = ask(xet_hash, first, last);
    } catch (...) {  // interrupted, or anything else: the connection asks for itself
      plan.reset();
    }
    lock.lock();
    // Entries in the asking state are never erased, so the one asked is still there.
    const auto asked = std::find_if(entries_.begin(), entries_.end(), [id](const Entry& e) { return e.id == id; });
    if (asked != entries_.end()) {
      asked->state = plan ? Entry::State::kReady : Entry::State::kFailed;
      asked->plan = std::move(plan);
    }
    lock.unlock();
    answered_.notify_all();
  }
  // An asker leaves the loop only between asks: each plan it took to ask has been marked ready or failed, so
  // no take() waits for one that will not come.
}

}  // namespace hfget::transfer
