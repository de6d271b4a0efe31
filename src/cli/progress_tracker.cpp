// SPDX-License-Identifier: MIT
// The rate is measured over a sliding window (the last 10 s), not since the start: after a stall or a resume
// the ETA must follow what the link does now.
#include "cli/progress_tracker.hpp"

#include <algorithm>

namespace hfget::cli {
namespace {

constexpr std::chrono::seconds kRateWindow{10};

}  // namespace

void ProgressTracker::plan(const DownloadPlanSummary& plan) {
  state_.planned = true;
  state_.commit = std::string(plan.commit);
  state_.files_total = plan.files_selected;
  state_.files_done = plan.files_selected - plan.files_to_fetch;
  state_.shards_total = plan.shards_selected;
  state_.shards_done = plan.shards_already_complete;
  state_.bytes_total = plan.bytes_selected;
  state_.bytes_done = plan.bytes_already_complete;
  started_ = std::chrono::steady_clock::now();
}

void ProgressTracker::file_started(const RemoteFile& file, std::uint64_t resumed_bytes) {
  active_[file.path] = ActiveFile{file.path, file.size, resumed_bytes};
  state_.bytes_done += resumed_bytes;
}

void ProgressTracker::bytes(const RemoteFile& file, std::uint64_t count) {
  active_[file.path].done += count;
  state_.bytes_done += count;
  state_.bytes_this_run += count;
}

void ProgressTracker::bytes_discarded(const RemoteFile& file, std::uint64_t count) {
  ActiveFile& active = active_[file.path];
  const std::uint64_t dropped = std::min(active.done, count);
  active.done -= dropped;
  state_.bytes_done -= std::min(state_.bytes_done, dropped);
}

void ProgressTracker::file_done(const RemoteFile& file) {
  active_.erase(file.path);
  ++state_.files_done;
  if (is_weight_file(file.path)) ++state_.shards_done;
}

void ProgressTracker::file_failed(const RemoteFile& file, const std::string& message) {
  active_.erase(file.path);
  state_.last_error = message;
}

ProgressSnapshot ProgressTracker::snapshot(std::chrono::steady_clock::time_point now) {
  samples_.push_back({now, state_.bytes_this_run});
  while (samples_.size() > 2 && now - samples_.front().time > kRateWindow) samples_.pop_front();
  const double window = std::chrono::duration<double>(now - samples_.front().time).count();
  const double since_start = std::chrono::duration<double>(now - started_).count();
  // Too short a window says nothing: then the average since the start (a short download's only rate).
  state_.rate_bytes_per_second = window > 0.5
                                     ? static_cast<double>(samples_.back().bytes - samples_.front().bytes) / window
                                 : since_start > 0.05 ? static_cast<double>(state_.bytes_this_run) / since_start
                                                      : 0.0;
  const std::uint64_t remaining = state_.bytes_total > state_.bytes_done ? state_.bytes_total - state_.bytes_done : 0;
  state_.eta_seconds = state_.rate_bytes_per_second > 0
                           ? std::optional<double>(static_cast<double>(remaining) / state_.rate_bytes_per_second)
                           : std::nullopt;
  state_.now = std::chrono::system_clock::now();
  state_.elapsed_seconds = std::chrono::duration<double>(now - started_).count();
  state_.active.clear();
  for (const auto& [path, file] : active_) state_.active.push_back(file);
  std::sort(state_.active.begin(), state_.active.end(),
            [](const ActiveFile& a, const ActiveFile& b) { return a.size > b.size; });
  return state_;
}

}  // namespace hfget::cli
