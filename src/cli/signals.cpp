// SPDX-License-Identifier: MIT
#include "cli/signals.hpp"

#include <unistd.h>

#include <csignal>
#include <ctime>

namespace hfget::cli {
namespace {

sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

SignalWatcher::SignalWatcher() {
  // A closed pipe on stderr/stdout must surface as a write error, not kill us mid-download.
  std::signal(SIGPIPE, SIG_IGN);
  const sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  waiter_ = std::jthread([this](const std::stop_token& shutdown) {
    const sigset_t signals = watched_signals();
    // Short, so that every command exits at once when it is done (the wait ends only by a signal or timeout).
    const timespec poll{0, 20'000'000};
    while (!shutdown.stop_requested()) {
      const int signal_number = sigtimedwait(&signals, nullptr, &poll);
      if (signal_number <= 0) continue;
      if (received_.load() == SIGINT && signal_number == SIGINT) _exit(130);  // second Ctrl-C: now
      int expected = 0;
      received_.compare_exchange_strong(expected, signal_number);
      stop_.request_stop();
    }
  });
}

SignalWatcher::~SignalWatcher() {
  waiter_.request_stop();
  waiter_.join();
}

}  // namespace hfget::cli
