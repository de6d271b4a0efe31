// SPDX-License-Identifier: MIT
#include "cli/progress_reporter.hpp"

#include <algorithm>

#include "util/printable.hpp"
#include "util/secrets.hpp"

namespace hfget::cli {
namespace {

ProgressEvent event_for(ProgressEvent::Kind kind, const RemoteFile* file = nullptr) {
  ProgressEvent event;
  event.kind = kind;
  if (file != nullptr) {
    event.path = file->path;
    event.size = file->size;
  }
  return event;
}

}  // namespace

ProgressReporter::ProgressReporter(std::vector<std::unique_ptr<ProgressView>> views) : views_(std::move(views)) {
  if (!views_.empty()) ticker_ = std::thread([this] { tick_loop(); });
}

ProgressReporter::~ProgressReporter() {
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

void ProgressReporter::dispatch(const ProgressEvent& event) {
  if (finished_) return;
  const ProgressSnapshot snapshot = tracker_.snapshot(std::chrono::steady_clock::now());
  for (const auto& view : views_) view->event(event, snapshot);
}

void ProgressReporter::on_waiting_for_target(std::optional<long> holder_pid) {
  std::lock_guard lock(mutex_);
  ProgressEvent event = event_for(ProgressEvent::Kind::kWaiting);
  event.holder_pid = holder_pid;
  dispatch(event);
}

void ProgressReporter::on_plan(const DownloadPlanSummary& plan) {
  std::lock_guard lock(mutex_);
  tracker_.plan(plan);
  dispatch(event_for(ProgressEvent::Kind::kPlan));
}

void ProgressReporter::on_file_started(const RemoteFile& file, std::uint64_t resumed_bytes) {
  std::lock_guard lock(mutex_);
  tracker_.file_started(file, resumed_bytes);
  ProgressEvent event = event_for(ProgressEvent::Kind::kFileStarted, &file);
  event.resumed_bytes = resumed_bytes;
  dispatch(event);
}

void ProgressReporter::on_bytes(const RemoteFile& file, std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  tracker_.bytes(file, bytes);
}

void ProgressReporter::on_bytes_copied(const RemoteFile& /*file*/, std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  tracker_.bytes_copied(bytes);
}

void ProgressReporter::on_bytes_discarded(const RemoteFile& file, std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  tracker_.bytes_discarded(file, bytes);
}

void ProgressReporter::on_retry(const RemoteFile& file, int attempt, std::string_view reason,
                                std::chrono::milliseconds delay) {
  std::lock_guard lock(mutex_);
  ProgressEvent event = event_for(ProgressEvent::Kind::kRetry, &file);
  event.attempt = attempt;
  // The reason quotes what the server sent (a status, a Content-Range): the views print it as it is.
  event.message = util::printable(util::redact_secrets(std::string(reason)), 1024);
  event.delay_seconds = static_cast<double>(delay.count()) / 1000.0;
  dispatch(event);
}

void ProgressReporter::on_file_done(const RemoteFile& file) {
  std::lock_guard lock(mutex_);
  tracker_.file_done(file);
  dispatch(event_for(ProgressEvent::Kind::kFileDone, &file));
}

void ProgressReporter::on_file_failed(const RemoteFile& file, const Error& error) {
  std::lock_guard lock(mutex_);
  tracker_.file_failed(file, error.what());
  ProgressEvent event = event_for(ProgressEvent::Kind::kFileFailed, &file);
  event.message = error.what();
  dispatch(event);
}

void ProgressReporter::on_connections(std::size_t count, std::string_view reason) {
  std::lock_guard lock(mutex_);
  tracker_.connections(count);
  ProgressEvent event = event_for(ProgressEvent::Kind::kConnections, nullptr);
  event.connections = count;
  event.message = std::string(reason);
  dispatch(event);
}

void ProgressReporter::on_file_path(const RemoteFile& file, TransferPath path, std::string_view reason) {
  std::lock_guard lock(mutex_);
  ProgressEvent event = event_for(ProgressEvent::Kind::kFilePath, &file);
  event.transfer_path = std::string(to_string(path));
  event.message = util::printable(util::redact_secrets(std::string(reason)), 1024);
  dispatch(event);
}

void ProgressReporter::finish(const ProgressOutcome& outcome) {
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  std::lock_guard lock(mutex_);
  const ProgressSnapshot snapshot = tracker_.snapshot(std::chrono::steady_clock::now());
  for (const auto& view : views_) view->finish(snapshot, outcome);
}

void ProgressReporter::tick_loop() {
  using Clock = std::chrono::steady_clock;
  std::vector<Clock::time_point> due(views_.size(), Clock::now());
  for (std::size_t i = 0; i < views_.size(); ++i) due[i] += views_[i]->period();
  std::unique_lock lock(mutex_);
  while (!finished_) {
    const Clock::time_point next = *std::min_element(due.begin(), due.end());
    if (wake_.wait_until(lock, next, [this] { return finished_; })) break;
    const Clock::time_point now = Clock::now();
    const ProgressSnapshot snapshot = tracker_.snapshot(now);
    for (std::size_t i = 0; i < views_.size(); ++i) {
      if (now < due[i]) continue;
      views_[i]->tick(snapshot);
      due[i] = now + views_[i]->period();
    }
  }
}

}  // namespace hfget::cli
