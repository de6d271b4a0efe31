// SPDX-License-Identifier: MIT
#include "transfer/connection_pool.hpp"

#include <algorithm>

namespace hfget::transfer {

ConnectionPool::ConnectionPool(ChunkScheduler& scheduler, Serve serve)
    : scheduler_(scheduler), serve_(std::move(serve)) {}

ConnectionPool::~ConnectionPool() {
  join();
}

void ConnectionPool::set_connections(std::size_t count) {
  count = std::max<std::size_t>(count, 1);  // none at all would park the download for ever
  const std::lock_guard lock(mutex_);
  scheduler_.set_connections(count);
  if (joined_) return;
  while (threads_.size() < count) threads_.emplace_back(serve_, threads_.size());
}

std::size_t ConnectionPool::connections() const {
  return scheduler_.connections();
}

std::size_t ConnectionPool::threads_started() const {
  const std::lock_guard lock(mutex_);
  return threads_.size();
}

void ConnectionPool::join() {
  for (std::size_t i = 0;; ++i) {
    std::jthread* thread = nullptr;
    {
      const std::lock_guard lock(mutex_);
      if (i >= threads_.size()) {
        joined_ = true;
        return;
      }
      thread = &threads_[i];
    }
    if (thread->joinable()) thread->join();
  }
}

}  // namespace hfget::transfer
