// SPDX-License-Identifier: MIT
#include "transfer/chunk_scheduler.hpp"

#include <algorithm>

namespace hfget::transfer {

ChunkScheduler::ChunkScheduler(std::vector<std::unique_ptr<FileJob>> jobs, ChunkPlan plan, std::stop_token stop)
    : plan_(plan), stop_(std::move(stop)) {
  files_.reserve(jobs.size());
  for (std::unique_ptr<FileJob>& job : jobs) {
    FileState file;
    file.job = std::move(job);
    files_.push_back(std::move(file));
  }
}

RangeTask* ChunkScheduler::next() {
  std::unique_lock lock(mutex_);
  while (!stop_.stop_requested()) {
    apply_refusals();
    // 1. A queued chunk of an open file that no connection is working on. One connection per file keeps the
    //    file's bytes arriving in order: they are hashed straight from the write buffer (no read-back), and
    //    connections do not queue on one file's inode lock.
    if (RangeTask* task = take_queued(/*only_idle_files=*/true)) return task;
    // 2. Open the next file.
    if (next_to_open_ < files_.size() && open_files_.size() < plan_.max_active_files) {
      open_file(lock, files_[next_to_open_++]);
      continue;
    }
    // 3. More connections than open files: a queued chunk of the open file with the fewest connections.
    if (RangeTask* task = take_queued(/*only_idle_files=*/false)) return task;
    // 4. Nothing queued: help with the largest range still in flight.
    if (RangeTask* task = split_tail()) return task;
    if (all_done()) return nullptr;
    // Woken by a task's end, a file opening or finishing, or the stop request.
    const std::uint64_t seen = generation_;
    wake_.wait(lock, stop_, [this, seen] { return generation_ != seen; });
  }
  return nullptr;
}

void ChunkScheduler::apply_refusals() {
  // A CDN that refused extra connections to a file (403/429 on parallel ranges) gets fewer from now on: as
  // many as it was serving when it refused, less one per refusal, at least one.
  for (const std::size_t index : open_files_) {
    FileState& file = files_[index];
    if (file.phase != FileState::Phase::kActive) continue;
    if (const int refusals = file.job->take_refusals(); refusals > 0) {
      file.job->set_connection_limit(std::max(1, std::min(file.job->connection_limit(), file.in_flight) - refusals));
    }
  }
}

RangeTask* ChunkScheduler::take_queued(bool only_idle_files) {
  FileState* chosen = nullptr;
  for (const std::size_t index : open_files_) {
    FileState& file = files_[index];
    if (file.phase != FileState::Phase::kActive || file.queued.empty()) continue;
    if (file.in_flight >= file.job->connection_limit() || (only_idle_files && file.in_flight > 0)) continue;
    if (chosen == nullptr || file.in_flight < chosen->in_flight) chosen = &file;
  }
  if (chosen == nullptr) return nullptr;
  // Queued gaps are cut into chunks as connections take them: a file the server says is a petabyte costs
  // one queue entry, not 2^25 of them.
  store::ByteRange& gap = chosen->queued.front();
  const store::ByteRange range{gap.begin,
                               gap.end - gap.begin > plan_.chunk_bytes ? gap.begin + plan_.chunk_bytes : gap.end};
  gap.begin = range.end;
  if (gap.begin >= gap.end) chosen->queued.pop_front();
  return start_task(*chosen, range);
}

RangeTask* ChunkScheduler::start_task(FileState& file, store::ByteRange range) {
  RangeTask& task = tasks_.emplace_back();
  task.job = file.job.get();
  task.file_index = static_cast<std::size_t>(&file - files_.data());
  task.begin = range.begin;
  task.position = range.begin;
  task.end = range.end;
  ++file.in_flight;
  return &task;
}

RangeTask* ChunkScheduler::split_tail() {
  RangeTask* largest = nullptr;
  std::uint64_t largest_remaining = 0;
  for (RangeTask& task : tasks_) {
    const FileState& file = files_[task.file_index];
    if (task.cancelled || file.phase != FileState::Phase::kActive || file.in_flight >= task.job->connection_limit()) {
      continue;
    }
    const std::uint64_t position = task.position;
    const std::uint64_t end = task.end;
    const std::uint64_t remaining = end > position ? end - position : 0;
    if (remaining > largest_remaining) {
      largest = &task;
      largest_remaining = remaining;
    }
  }
  if (largest == nullptr || largest_remaining < 2 * plan_.min_split_bytes) return nullptr;
  const std::uint64_t old_end = largest->end;
  const std::uint64_t middle = old_end - largest_remaining / 2;
  largest->end = middle;  // the owner stops there; bytes it writes past it in the meantime are the same bytes
  return start_task(files_[largest->file_index], {middle, old_end});
}

void ChunkScheduler::queue_missing(FileState& file) {
  const std::uint64_t size = file.job->file().size;
  if (size == 0) {
    file.queued.push_back({0, 0});  // one request all the same: access must be granted
    return;
  }
  for (const store::ByteRange& gap : file.job->missing_ranges()) {
    if (gap.begin < gap.end) file.queued.push_back(gap);
  }
}

void ChunkScheduler::open_file(std::unique_lock<std::mutex>& lock, FileState& file) {
  file.phase = FileState::Phase::kOpening;
  open_files_.push_back(static_cast<std::size_t>(&file - files_.data()));
  lock.unlock();
  std::optional<Error> error;
  bool needs_bytes = false;
  try {
    needs_bytes = file.job->activate(stop_);
  } catch (const Error& failure) {
    error = failure;
  }
  lock.lock();
  if (error) {
    file.error = error;
    close_file(file);
  } else if (!needs_bytes) {
    close_file(file);
  } else {
    file.phase = FileState::Phase::kActive;
    queue_missing(file);
    if (file.queued.empty()) finish_file(lock, file);  // every byte was kept from an earlier run
  }
  ++generation_;
  wake_.notify_all();
}

void ChunkScheduler::finish_file(std::unique_lock<std::mutex>& lock, FileState& file) {
  file.phase = FileState::Phase::kFinishing;
  lock.unlock();
  std::optional<Error> error;
  std::optional<FileJob::Outcome> outcome;
  try {
    outcome = file.job->finish(stop_);
  } catch (const Error& failure) {
    error = failure;
  }
  lock.lock();
  if (outcome == FileJob::Outcome::kStartOver) {
    file.phase = FileState::Phase::kActive;
    queue_missing(file);
  } else {
    if (error) {
      file.error = error;
      file.job->abandon();
    }
    file.fetched = !error;
    close_file(file);
  }
  ++generation_;
  wake_.notify_all();
}

void ChunkScheduler::start_over(std::unique_lock<std::mutex>& lock, FileState& file) {
  file.phase = FileState::Phase::kFinishing;  // no connection takes a range of it meanwhile
  lock.unlock();
  std::optional<Error> error;
  try {
    file.job->start_over_after_change();
  } catch (const Error& failure) {
    error = failure;
  }
  lock.lock();
  if (error) {
    file.error = error;
    file.job->abandon();
    close_file(file);
  } else {
    file.phase = FileState::Phase::kActive;
    queue_missing(file);
  }
}

void ChunkScheduler::done(RangeTask* task, const std::optional<Error>& error) {
  FileState& file = files_[task->file_index];
  // What arrived is recorded even when the range failed: a resume must not fetch it again.
  std::optional<Error> failure = error;
  if (task->position > task->begin) {
    try {
      file.job->complete_range({task->begin, task->position});
    } catch (const Error& journal_error) {
      if (!failure) failure = journal_error;
    }
  }
  std::unique_lock lock(mutex_);
  --file.in_flight;
  tasks_.remove_if([task](const RangeTask& candidate) { return &candidate == task; });
  const bool changed = !file.error && file.job->restart_requested();
  if ((failure && !file.error) || changed) {
    if (!changed) file.error = failure;
    file.queued.clear();
    for (RangeTask& other : tasks_) {
      if (other.job == file.job.get()) other.cancelled = true;
    }
  }
  if (file.in_flight == 0 && file.phase == FileState::Phase::kActive) {
    if (file.error) {
      file.job->abandon();
      close_file(file);
    } else if (changed) {
      start_over(lock, file);
    } else if (file.queued.empty()) {
      const std::vector<store::ByteRange> missing = file.job->missing_ranges();
      if (missing.empty() || file.job->file().size == 0) {
        finish_file(lock, file);
      } else {
        queue_missing(file);  // a range ended short without an error (cancelled split): fetch what is left
      }
    }
  }
  ++generation_;
  wake_.notify_all();
}

void ChunkScheduler::close_file(FileState& file) {
  file.phase = FileState::Phase::kDone;
  const auto index = static_cast<std::size_t>(&file - files_.data());
  open_files_.erase(std::find(open_files_.begin(), open_files_.end(), index));
}

bool ChunkScheduler::all_done() const {
  // Every file was opened, and every opened one is done (open_files_ lists the others).
  return next_to_open_ == files_.size() && open_files_.empty();
}

std::vector<std::optional<Error>> ChunkScheduler::errors() const {
  std::lock_guard lock(mutex_);
  std::vector<std::optional<Error>> result;
  for (const FileState& file : files_) result.push_back(file.error);
  return result;
}

std::vector<bool> ChunkScheduler::fetched() const {
  std::lock_guard lock(mutex_);
  std::vector<bool> result;
  for (const FileState& file : files_) result.push_back(file.fetched);
  return result;
}

std::size_t ChunkScheduler::files_fetched() const {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(
      std::count_if(files_.begin(), files_.end(), [](const FileState& f) { return f.fetched; }));
}

std::uint64_t ChunkScheduler::bytes_received() const {
  std::lock_guard lock(mutex_);
  std::uint64_t total = 0;
  for (const FileState& file : files_) total += file.job->bytes_received();
  return total;
}

}  // namespace hfget::transfer
