// SPDX-License-Identifier: MIT
#include "util/interruptible_sleep.hpp"

#include <condition_variable>
#include <mutex>

namespace hfget::util {

bool sleep_unless_stopped(std::chrono::milliseconds duration, const std::stop_token& stop) {
  std::mutex mutex;
  std::condition_variable_any wake;
  std::unique_lock lock(mutex);
  // The predicate never holds: the wait ends by timeout or by the stop request, and the result says which.
  wake.wait_for(lock, stop, duration, [] { return false; });
  return !stop.stop_requested();
}

}  // namespace hfget::util
