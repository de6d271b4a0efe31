// SPDX-License-Identifier: MIT
// The download's connection threads, as many as a count that may change while the download runs: the
// connection controller of a later issue lowers it when more connections stop paying and raises it when
// the link has room. A lowered count parks the extra threads (each once its current range is done; their
// transports stay open for a raise), a raised one wakes them and starts threads for numbers never run yet.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "transfer/chunk_scheduler.hpp"

namespace hfget::transfer {

class ConnectionPool {
 public:
  /// Runs one connection (number `connection`, 0-based) until the scheduler has no more work for it.
  using Serve = std::function<void(std::size_t connection)>;

  /// Starts no thread until set_connections. `scheduler` and `serve` must outlive the pool.
  ConnectionPool(ChunkScheduler& scheduler, Serve serve);
  ~ConnectionPool();  // joins
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  /// How many connections take work from now on (at least 1). Thread-safe; callable from a connection.
  void set_connections(std::size_t count);
  std::size_t connections() const;
  /// Threads started so far (parked ones included).
  std::size_t threads_started() const;
  /// Returns once every connection thread has returned (the download is done or stopped).
  void join();

 private:
  ChunkScheduler& scheduler_;
  Serve serve_;
  mutable std::mutex mutex_;
  std::deque<std::jthread> threads_;  // a deque: starting one does not move those being joined
  bool joined_ = false;               // no thread is started any more
};

}  // namespace hfget::transfer
