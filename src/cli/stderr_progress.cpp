// SPDX-License-Identifier: MIT
#include "cli/stderr_progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "cli/progress_views.hpp"

namespace hfget::cli {
namespace {

void to_stderr(const std::string& text) {
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace

StderrProgress::StderrProgress(bool quiet, std::chrono::seconds interval)
    : StderrProgress(quiet, ::isatty(STDERR_FILENO) == 1, interval, to_stderr) {}

StderrProgress::StderrProgress(bool quiet, bool terminal, std::chrono::seconds interval, Writer writer)
    : quiet_(quiet), terminal_(terminal), interval_(interval), writer_(std::move(writer)) {}

StderrProgress::~StderrProgress() {
  clear();
}

void StderrProgress::show(const std::string& line, Clock::time_point now) {
  if (quiet_) return;
  if (terminal_) {
    writer_(fmt::format("\r\x1b[K{}", line));
    line_open_ = true;
    return;
  }
  if (!first_shown_) first_shown_ = now;
  const Clock::time_point since = last_line_.value_or(*first_shown_);
  if (now - since < interval_) return;
  writer_(fmt::format("{} {}\n", utc_timestamp(), line));
  last_line_ = now;
}

void StderrProgress::clear() {
  if (!line_open_) return;
  writer_("\r\x1b[K");
  line_open_ = false;
}

}  // namespace hfget::cli
