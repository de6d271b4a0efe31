// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "cli/signals.hpp"

namespace hfget::cli {
namespace {

// Stands for a step that never looks at the stop request (a parse, a read blocked on a dying disk).
[[noreturn]] void ignore_the_stop_request() {
  std::this_thread::sleep_for(std::chrono::seconds(30));
  _exit(0);
}

}  // namespace

TEST(SignalWatcherDeathTest, TheFirstSignalRequestsAStop) {
  EXPECT_EXIT(
      {
        SignalWatcher watcher;
        ::kill(::getpid(), SIGTERM);
        for (int i = 0; i < 200 && !watcher.stop_token().stop_requested(); ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        _exit(watcher.stop_token().stop_requested() && watcher.received_signal() == SIGTERM ? 7 : 1);
      },
      ::testing::ExitedWithCode(7), "");
}

TEST(SignalWatcherDeathTest, ASecondSigtermExitsAtOnce) {
  EXPECT_EXIT(
      {
        SignalWatcher watcher;
        ::kill(::getpid(), SIGTERM);
        while (!watcher.stop_token().stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        ::kill(::getpid(), SIGTERM);
        ignore_the_stop_request();
      },
      ::testing::ExitedWithCode(143), "second signal: exiting now; partial files are kept");
}

TEST(SignalWatcherDeathTest, ASecondCtrlCExitsAtOnceWith130) {
  EXPECT_EXIT(
      {
        SignalWatcher watcher;
        ::kill(::getpid(), SIGINT);
        while (!watcher.stop_token().stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        ::kill(::getpid(), SIGINT);
        ignore_the_stop_request();
      },
      ::testing::ExitedWithCode(130), "second signal");
}

TEST(SignalWatcherDeathTest, AProcessThatDoesNotStopIsEndedAfterTheGracePeriod) {
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EXIT(
      {
        SignalWatcher watcher;
        ::kill(::getpid(), SIGTERM);
        ignore_the_stop_request();
      },
      ::testing::ExitedWithCode(143), "did not stop within 5s of the signal");
  // Exit code 143, not the 0 the child's 30 s sleep ends with, says it was ended; not before the grace period.
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

}  // namespace hfget::cli
