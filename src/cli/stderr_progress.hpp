// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace hfget::cli {

/// The progress of a long command that is not a download (wait, verify), for people, on stderr only: on a
/// terminal one line redrawn in place; otherwise (a log, a pipe) a timestamped line every `interval`, the
/// first one interval in, so that a short run prints nothing and a long one shows in a deploy log that it is
/// not stuck, as download's log lines do. Nothing when quiet.
class StderrProgress {
 public:
  using Clock = std::chrono::steady_clock;
  /// Where the text goes: stderr by default; a test passes its own.
  using Writer = std::function<void(const std::string& text)>;

  StderrProgress(bool quiet, std::chrono::seconds interval);
  StderrProgress(bool quiet, bool terminal, std::chrono::seconds interval, Writer writer);
  StderrProgress(const StderrProgress&) = delete;
  StderrProgress& operator=(const StderrProgress&) = delete;
  ~StderrProgress();

  /// Call as often as there is news (every half second, say); prints when it is due.
  void show(const std::string& line, Clock::time_point now = Clock::now());
  /// Clears the live line, before anything else is printed.
  void clear();

 private:
  bool quiet_;
  bool terminal_;
  std::chrono::seconds interval_;
  Writer writer_;
  bool line_open_ = false;
  std::optional<Clock::time_point> first_shown_;
  std::optional<Clock::time_point> last_line_;
};

}  // namespace hfget::cli
