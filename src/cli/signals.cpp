// SPDX-License-Identifier: MIT
#include "cli/signals.hpp"

#include <pthread.h>
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
    // The destructor wakes the wait with a signal of its own; the timeout only bounds a missed wake-up.
    const timespec poll{1, 0};
    while (!shutdown.stop_requested()) {
      const int signal_number = sigtimedwait(&signals, nullptr, &poll);
      if (signal_number <= 0 || shutdown.stop_requested()) continue;
      if (received_.load() == SIGINT && signal_number == SIGINT) _exit(130);  // second Ctrl-C: now
      int expected = 0;
      received_.compare_exchange_strong(expected, signal_number);
      stop_.request_stop();
    }
  });
}

SignalWatcher::~SignalWatcher() {
  waiter_.request_stop();
  // Directed at the waiting thread, which has it blocked: it ends the sigtimedwait at once (pending if
  // the thread is not waiting yet), so a command exits as soon as it is done, not up to a poll later.
  pthread_kill(waiter_.native_handle(), SIGTERM);
  waiter_.join();
}

}  // namespace hfget::cli
