// SPDX-License-Identifier: MIT
#include "cli/signals.hpp"

#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <ctime>
#include <optional>
#include <string>

namespace hfget::cli {
namespace {

sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// Long enough for every connection to end its transfer and append its last journal line; a step that does
// not watch the stop request (a parse, a read that blocks on a dying disk) cannot keep hfget alive past it.
// Exiting without the clean-up is safe by design: partial files and journals survive kill -9 (the next run
// resumes; `hfget status` reads the run as died).
constexpr std::chrono::seconds kGracePeriod{5};

[[noreturn]] void exit_now(int signal_number, const char* why) {
  // write(2), not stdio: another thread may hold stderr's lock.
  const std::string message =
      std::string("hfget: ") + why + ": exiting now; partial files are kept; run the same command again to resume\n";
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, message.data(), message.size());
  _exit(signal_number == SIGTERM ? 143 : 130);
}

}  // namespace

SignalWatcher::SignalWatcher() {
  // A closed pipe on stderr/stdout must surface as a write error, not kill us mid-download.
  std::signal(SIGPIPE, SIG_IGN);
  const sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  waiter_ = std::jthread([this](const std::stop_token& shutdown) {
    const sigset_t signals = watched_signals();
    // The destructor wakes the wait with a signal of its own; the timeout only bounds a missed wake-up, and,
    // once stopping, how late the grace period below is enforced.
    const timespec poll{0, 250'000'000};
    std::optional<std::chrono::steady_clock::time_point> stopping_since;
    while (!shutdown.stop_requested()) {
      const int signal_number = sigtimedwait(&signals, nullptr, &poll);
      if (shutdown.stop_requested()) break;
      if (stopping_since && std::chrono::steady_clock::now() - *stopping_since > kGracePeriod) {
        exit_now(received_.load(), "did not stop within 5s of the signal");
      }
      if (signal_number <= 0) continue;
      if (stopping_since) exit_now(signal_number, "second signal");  // a second Ctrl-C or kill: now
      received_.store(signal_number);
      stopping_since = std::chrono::steady_clock::now();
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
