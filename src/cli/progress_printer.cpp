// SPDX-License-Identifier: MIT
#include "cli/progress_printer.hpp"

#include <fmt/format.h>

#include <ctime>

#include "util/byte_size.hpp"

namespace hfget::cli {

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

ProgressPrinter::ProgressPrinter(ProgressStyle style, std::chrono::seconds log_interval, std::FILE* out)
    : style_(style), log_interval_(log_interval), out_(out) {
  if (style_ != ProgressStyle::kSilent) ticker_ = std::thread([this] { tick(); });
}

ProgressPrinter::~ProgressPrinter() { finish(); }

void ProgressPrinter::finish() {
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = true;
    if (status_shown_) {
      std::fputs(("\r" + status_text(std::chrono::steady_clock::now()) + "\n").c_str(), out_);
      status_shown_ = false;
    }
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

std::string ProgressPrinter::status_text(std::chrono::steady_clock::time_point now) const {
  const double seconds = std::chrono::duration<double>(now - started_).count();
  const double rate = seconds > 0 ? static_cast<double>(bytes_this_run_) / seconds : 0;
  const double percent = bytes_total_ > 0 ? 100.0 * static_cast<double>(bytes_done_) / static_cast<double>(bytes_total_) : 100.0;
  const std::uint64_t remaining = bytes_total_ > bytes_done_ ? bytes_total_ - bytes_done_ : 0;
  const std::string eta = rate > 0 ? util::format_duration(static_cast<double>(remaining) / rate) : "?";
  return fmt::format("{}/{} files  {} / {} ({:.1f}%)  {}  ETA {}", files_done_, files_total_,
                     util::format_binary_bytes(bytes_done_), util::format_binary_bytes(bytes_total_), percent,
                     util::format_rate(rate), eta);
}

void ProgressPrinter::write_line(const std::string& line) {
  if (style_ == ProgressStyle::kTerminal) {
    // Clear the status line, print, and let the next tick redraw it.
    std::fputs(fmt::format("\r\033[K{}\n", line).c_str(), out_);
    status_shown_ = false;
  } else {
    std::fputs(fmt::format("{} {}\n", utc_timestamp(), line).c_str(), out_);
  }
  std::fflush(out_);
}

void ProgressPrinter::print_line(const std::string& line) {
  std::lock_guard lock(mutex_);
  if (style_ == ProgressStyle::kSilent) return;
  if (style_ == ProgressStyle::kTerminal) {
    if (status_shown_) std::fputs("\r\033[K", out_);
    std::fputs((line + "\n").c_str(), out_);
    status_shown_ = false;
    std::fflush(out_);
    return;
  }
  write_line(line);
}

void ProgressPrinter::on_plan(const DownloadPlanSummary& plan) {
  std::lock_guard lock(mutex_);
  planned_ = true;
  files_total_ = plan.files_selected;
  files_done_ = plan.files_selected - plan.files_to_fetch;
  bytes_total_ = plan.bytes_selected;
  bytes_done_ = plan.bytes_already_complete;
  started_ = std::chrono::steady_clock::now();
  if (style_ == ProgressStyle::kSilent) return;
  write_line(fmt::format("commit {}: {} files, {}; {} to fetch, {} already complete", plan.commit.substr(0, 12),
                         plan.files_selected, util::format_bytes_both(plan.bytes_selected), plan.files_to_fetch,
                         util::format_bytes_both(plan.bytes_already_complete)));
}

void ProgressPrinter::on_file_started(const RemoteFile& file, std::uint64_t resumed_bytes) {
  std::lock_guard lock(mutex_);
  active_[file.path] = resumed_bytes;
  bytes_done_ += resumed_bytes;
  if (resumed_bytes > 0 && style_ != ProgressStyle::kSilent) {
    write_line(fmt::format("{}: resuming at {} of {}", file.path, util::format_binary_bytes(resumed_bytes),
                           util::format_binary_bytes(file.size)));
  }
}

void ProgressPrinter::on_bytes(const RemoteFile& file, std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  active_[file.path] += bytes;
  bytes_done_ += bytes;
  bytes_this_run_ += bytes;
}

void ProgressPrinter::on_bytes_discarded(const RemoteFile& file, std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  std::uint64_t& active = active_[file.path];
  const std::uint64_t dropped = std::min(active, bytes);
  active -= dropped;
  bytes_done_ -= std::min(bytes_done_, dropped);
}

void ProgressPrinter::on_retry(const RemoteFile& file, int attempt, std::string_view reason,
                               std::chrono::milliseconds delay) {
  std::lock_guard lock(mutex_);
  if (style_ == ProgressStyle::kSilent) return;
  write_line(fmt::format("{}: {}; retry {} in {:.1f}s", file.path, reason, attempt,
                         static_cast<double>(delay.count()) / 1000.0));
}

void ProgressPrinter::on_file_done(const RemoteFile& file) {
  std::lock_guard lock(mutex_);
  active_.erase(file.path);
  ++files_done_;
  if (style_ == ProgressStyle::kSilent) return;
  write_line(fmt::format("{}/{} done {} ({})", files_done_, files_total_, file.path, util::format_binary_bytes(file.size)));
}

void ProgressPrinter::on_file_failed(const RemoteFile& file, const Error& error) {
  std::lock_guard lock(mutex_);
  active_.erase(file.path);
  if (style_ == ProgressStyle::kSilent) return;
  write_line(fmt::format("FAILED {}", error.what()));
}

void ProgressPrinter::tick() {
  const auto period = style_ == ProgressStyle::kTerminal ? std::chrono::milliseconds(250)
                                                         : std::chrono::milliseconds(log_interval_);
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return finished_; })) {
    if (!planned_) continue;
    const std::string status = status_text(std::chrono::steady_clock::now());
    if (style_ == ProgressStyle::kTerminal) {
      std::fputs(fmt::format("\r\033[K{}", status).c_str(), out_);
      status_shown_ = true;
    } else {
      std::fputs(fmt::format("{} {}\n", utc_timestamp(), status).c_str(), out_);
    }
    std::fflush(out_);
  }
}

}  // namespace hfget::cli
