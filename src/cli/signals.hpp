// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <stop_token>
#include <thread>

namespace hfget::cli {

/// Turns SIGINT and SIGTERM into a stop request that every transfer watches, so partial files are closed
/// cleanly and stay resumable. A second signal (SIGINT or SIGTERM) exits at once, and so does a process
/// still running 5 s after the first: partial files are crash-safe, so no step may make a signal wait. Construct it in
/// main() before any other thread starts: it blocks the signals in every thread and waits for them on its own.
class SignalWatcher {
 public:
  SignalWatcher();
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  std::stop_token stop_token() const noexcept { return stop_.get_token(); }
  /// The signal that stopped us (SIGINT or SIGTERM), or 0.
  int received_signal() const noexcept { return received_.load(); }

 private:
  std::stop_source stop_;
  std::atomic<int> received_{0};
  std::jthread waiter_;
};

}  // namespace hfget::cli
