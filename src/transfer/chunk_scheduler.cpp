// SPDX-License-Identifier: MIT
#include "transfer/chunk_scheduler.hpp"

#include <algorithm>
#include <chrono>

namespace hfget::transfer {
namespace {

// How many split sizes of bytes still to come make a range worth cutting inside the request in flight.
constexpr std::uint64_t kLongRemainder = 4;
// ...or how long the rest of it would take at the rate it has come so far (a connection the CDN caps, a
// stalling one): then the server has not sent it yet, so a cut wastes little, and halving it saves that long.
// 100 ms, not more: at a 40 MB/s edge, 250 ms left a shard's last 6-10 MB to one connection while the others
// idled (docs/benchmarks.md, issue 18 on the GPU server); a fast uncapped range is never this slow.
constexpr std::chrono::milliseconds kSlowRemainder{100};
// The least time a range has run before its rate says anything.
constexpr std::chrono::milliseconds kRateSample{50};

// Whether the `remaining` bytes of `task` would take longer than kSlowRemainder at its rate so far.
bool slow_to_finish(const RangeTask& task, std::uint64_t position, std::uint64_t remaining,
                    std::chrono::steady_clock::time_point now) {
  const auto elapsed = now - task.started;
  if (task.started == std::chrono::steady_clock::time_point{} || elapsed < kRateSample) return false;
  const std::uint64_t received = position > task.begin ? position - task.begin : 0;
  if (received == 0) return elapsed >= kSlowRemainder;
  const double seconds_left =
      static_cast<double>(remaining) * std::chrono::duration<double>(elapsed).count() / static_cast<double>(received);
  return seconds_left >= std::chrono::duration<double>(kSlowRemainder).count();
}

}  // namespace

ChunkScheduler::ChunkScheduler(std::vector<ScheduledFile> files, ChunkPlan plan, PublishStep publish,
                               std::stop_token stop)
    : plan_(plan), publish_(std::move(publish)), stop_(std::move(stop)) {
  files_.reserve(files.size());
  for (ScheduledFile& scheduled : files) {
    FileState file;
    file.file = std::move(scheduled.file);
    file.source = std::move(scheduled.source);
    files_.push_back(std::move(file));
  }
  // The tail, in the order the files open: the last file's last bytes first.
  std::uint64_t in_tail = 0;
  for (auto file = files_.rbegin(); file != files_.rend() && in_tail < plan_.tail_bytes; ++file) {
    const std::uint64_t size = file->file->remote().size;
    const std::uint64_t share = std::min(size, plan_.tail_bytes - in_tail);  // no sum of sizes: they can be huge
    file->finer_from = size - share;
    in_tail += share;
  }
}

RangeTask* ChunkScheduler::next(std::size_t connection) {
  std::unique_lock lock(mutex_);
  while (!stop_.stop_requested()) {
    if (connection < connections_) {
      apply_refusals();
      // 1. A queued chunk of an open file that no connection is working on. One connection per file keeps
      //    the file's bytes arriving in order: they are hashed straight from the write buffer (no read-back),
      //    and connections do not queue on one file's inode lock.
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
    }
    if (all_done()) return nullptr;
    // Woken by a task's end, a file opening or finishing, a new connection count, or the stop request.
    const std::uint64_t seen = generation_;
    wake_.wait(lock, stop_, [this, seen] { return generation_ != seen; });
  }
  return nullptr;
}

void ChunkScheduler::set_connections(std::size_t count) {
  {
    const std::lock_guard lock(mutex_);
    connections_ = count;
    ++generation_;
  }
  wake_.notify_all();
}

std::size_t ChunkScheduler::connections() const {
  const std::lock_guard lock(mutex_);
  return connections_;
}

void ChunkScheduler::apply_refusals() {
  // A source that saw refused connections to a file (a CDN's 403/429 on parallel ranges) reported them to
  // the file's budget; it gets fewer connections from now on (ConnectionBudget::apply_refusals).
  for (const std::size_t index : open_files_) {
    FileState& file = files_[index];
    if (file.phase == FileState::Phase::kActive) file.budget->apply_refusals(file.in_flight);
  }
}

RangeTask* ChunkScheduler::take_queued(bool only_idle_files) {
  FileState* chosen = nullptr;
  for (const std::size_t index : open_files_) {
    FileState& file = files_[index];
    if (file.phase != FileState::Phase::kActive || file.queued.empty()) continue;
    if (file.in_flight >= file.budget->limit() || (only_idle_files && file.in_flight > 0)) continue;
    if (chosen == nullptr || file.in_flight < chosen->in_flight) chosen = &file;
  }
  if (chosen == nullptr) return nullptr;
  // Queued gaps are cut into chunks as connections take them: a file the server says is a petabyte costs
  // one queue entry, not 2^25 of them.
  store::ByteRange& gap = chosen->queued.front();
  const store::ByteRange range = first_chunk(*chosen, gap);
  gap.begin = range.end;
  if (gap.begin >= gap.end) chosen->queued.pop_front();
  return start_task(*chosen, range);
}

RangeTask* ChunkScheduler::start_task(FileState& file, store::ByteRange range) {
  RangeTask& task = tasks_.emplace_back();
  task.file = file.file.get();
  task.source = file.source.get();
  task.budget = file.budget.get();
  task.file_index = static_cast<std::size_t>(&file - files_.data());
  task.begin = range.begin;
  task.position = range.begin;
  task.end = range.end;
  task.extension = this;
  task.started = std::chrono::steady_clock::now();
  ++file.in_flight;
  return &task;
}

std::uint64_t ChunkScheduler::end_after_request(RangeTask& task) {
  const std::lock_guard lock(mutex_);  // split_tail reads requested_until and lowers end under it
  return task.end;
}

store::ByteRange ChunkScheduler::first_chunk(const FileState& file, const store::ByteRange& gap) const {
  const std::uint64_t chunk =
      gap.begin >= file.finer_from ? std::max(plan_.chunk_bytes / 2, plan_.min_split_bytes) : plan_.chunk_bytes;
  return {gap.begin, gap.size() > chunk ? gap.begin + chunk : gap.end};
}

std::optional<std::deque<store::ByteRange>::iterator> ChunkScheduler::queued_after(const RangeTask& task) {
  FileState& file = files_[task.file_index];
  if (task.cancelled || file.phase != FileState::Phase::kActive) return std::nullopt;
  const std::uint64_t end = task.end;
  const auto gap = std::find_if(file.queued.begin(), file.queued.end(),
                                [end](const store::ByteRange& queued) { return queued.begin == end; });
  if (gap == file.queued.end()) return std::nullopt;
  return gap;
}

store::ByteRange ChunkScheduler::queued_from(const RangeTask& task, std::uint64_t begin) {
  const std::lock_guard lock(mutex_);
  const FileState& file = files_[task.file_index];
  if (task.cancelled || file.phase != FileState::Phase::kActive) return {};
  // The first queued bytes at or after `begin` (the gaps are few: the holes a resumed file left).
  const store::ByteRange* first = nullptr;
  for (const store::ByteRange& gap : file.queued) {
    if (gap.end > begin && (first == nullptr || gap.begin < first->begin)) first = &gap;
  }
  if (first == nullptr) return {};
  return first_chunk(file, {std::max(begin, first->begin), first->end});
}

std::size_t ChunkScheduler::takers_per_file() {
  const std::lock_guard lock(mutex_);
  std::size_t places = 0;
  for (const std::size_t index : open_files_) {
    const FileState& file = files_[index];
    if (file.phase == FileState::Phase::kActive && !file.queued.empty()) ++places;
  }
  if (open_files_.size() < plan_.max_active_files) {
    places += std::min(plan_.max_active_files - open_files_.size(), files_.size() - next_to_open_);
  }
  places = std::max<std::size_t>(places, 1);
  return std::max<std::size_t>((tasks_.size() + places - 1) / places, 1);
}

std::vector<UpcomingRanges> ChunkScheduler::next_files_start(std::size_t files, std::size_t count) {
  const std::lock_guard lock(mutex_);
  std::vector<UpcomingRanges> upcoming;
  for (std::size_t index = next_to_open_; index < files_.size() && upcoming.size() < files; ++index) {
    const RemoteFile& file = files_[index].file->remote();
    if (file.size == 0) continue;
    UpcomingRanges& next = upcoming.emplace_back(UpcomingRanges{.file = &file, .ranges = {}});
    for (std::uint64_t begin = 0; begin < file.size && next.ranges.size() < count;) {
      next.ranges.push_back(first_chunk(files_[index], {begin, file.size}));
      begin = next.ranges.back().end;
    }
  }
  return upcoming;
}

bool ChunkScheduler::extend(RangeTask& task, std::uint64_t new_end) {
  const std::lock_guard lock(mutex_);
  if (new_end <= task.end) return true;
  const auto gap = queued_after(task);
  if (!gap || new_end > (*gap)->end) return false;
  (*gap)->begin = new_end;
  if ((*gap)->begin >= (*gap)->end) files_[task.file_index].queued.erase(*gap);
  task.end = new_end;
  return true;
}

bool ChunkScheduler::give_back(RangeTask& task, std::uint64_t new_end) {
  const std::lock_guard lock(mutex_);
  // task.end is read under the lock: a split may have lowered it since the connection looked.
  if (new_end >= task.end || new_end <= task.position) return false;
  const auto gap = queued_after(task);
  if (!gap) return false;
  (*gap)->begin = new_end;
  task.end = new_end;
  return true;
}

RangeTask* ChunkScheduler::split_tail() {
  // The range with the most bytes still to come is halved. A range whose connection asks for its bytes a
  // piece at a time (requested_until) is preferred when what it has not asked for yet is worth a split:
  // cut there, the request in flight runs to its end and nothing is fetched twice.
  RangeTask* largest = nullptr;
  std::uint64_t largest_remaining = 0;
  RangeTask* freest = nullptr;
  std::uint64_t freest_unasked = 0;
  const auto now = std::chrono::steady_clock::now();
  for (RangeTask& task : tasks_) {
    const FileState& file = files_[task.file_index];
    if (task.cancelled || file.phase != FileState::Phase::kActive || file.in_flight >= file.budget->limit()) {
      continue;
    }
    const std::uint64_t position = task.position;
    const std::uint64_t end = task.end;
    const std::uint64_t remaining = end > position ? end - position : 0;
    const std::uint64_t asked = std::max<std::uint64_t>(task.requested_until, position);
    const std::uint64_t unasked = task.requested_until > 0 && end > asked ? end - asked : 0;
    // A request cut short wastes what the server already sent, all of it on a fast path: a range asked for
    // a piece at a time is cut inside its request only when what it still has to come is long, or slow to come.
    const bool cut_is_cheap = task.requested_until == 0 || remaining >= kLongRemainder * plan_.min_split_bytes ||
                              slow_to_finish(task, position, remaining, now);
    if (remaining > largest_remaining && cut_is_cheap) {
      largest = &task;
      largest_remaining = remaining;
    }
    if (unasked > freest_unasked) {
      freest = &task;
      freest_unasked = unasked;
    }
  }
  if (freest != nullptr && freest_unasked >= 2 * plan_.min_split_bytes) {
    const std::uint64_t old_end = freest->end;
    const std::uint64_t middle =
        std::max<std::uint64_t>(old_end - (old_end - freest->position) / 2, freest->requested_until);
    freest->end = middle;  // leaves each at least min_split_bytes
    return start_task(files_[freest->file_index], {middle, old_end});
  }
  if (largest == nullptr || largest_remaining < 2 * plan_.min_split_bytes) return nullptr;
  const std::uint64_t old_end = largest->end;
  const std::uint64_t middle = old_end - largest_remaining / 2;
  largest->end = middle;  // the owner stops there; bytes it writes past it in the meantime are the same bytes
  return start_task(files_[largest->file_index], {middle, old_end});
}

void ChunkScheduler::queue_missing(FileState& file) {
  const std::uint64_t size = file.file->remote().size;
  if (size == 0) {
    file.queued.push_back({0, 0});  // one request all the same: access must be granted
    return;
  }
  for (const store::ByteRange& gap : file.file->missing_ranges()) {
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
    needs_bytes = file.file->activate(stop_);
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
  const bool again = verify_and_publish(file, error);
  lock.lock();
  if (again) {
    file.phase = FileState::Phase::kActive;
    queue_missing(file);
  } else {
    if (error) {
      file.error = error;
      file.file->abandon();
    }
    file.fetched = !error;
    close_file(file);
  }
  ++generation_;
  wake_.notify_all();
}

bool ChunkScheduler::verify_and_publish(FileState& file, std::optional<Error>& error) {
  try {
    if (file.file->verify(stop_) == IncomingFile::Verdict::kStartOver) {
      if (file.source) file.source->on_start_over();
      return true;
    }
    file.file->publish(publish_);
    if (file.source) file.source->on_published();
  } catch (const Error& failure) {
    error = failure;
  }
  return false;
}

void ChunkScheduler::start_over(std::unique_lock<std::mutex>& lock, FileState& file) {
  file.phase = FileState::Phase::kFinishing;  // no connection takes a range of it meanwhile
  lock.unlock();
  std::optional<Error> error;
  try {
    file.file->start_over_after_change();
    if (file.source) file.source->on_start_over();
  } catch (const Error& failure) {
    error = failure;
  }
  lock.lock();
  if (error) {
    file.error = error;
    fail_file(file);
  } else {
    file.phase = FileState::Phase::kActive;
    queue_missing(file);
  }
}

void ChunkScheduler::done(RangeTask* task, const std::optional<Error>& error) {
  FileState& file = files_[task->file_index];
  std::optional<Error> failure = error;
  record_arrived(*task, failure);
  std::unique_lock lock(mutex_);
  --file.in_flight;
  tasks_.remove_if([task](const RangeTask& candidate) { return &candidate == task; });
  const bool changed = !file.error && file.file->restart_requested();
  if ((failure && !file.error) || changed) {
    if (!changed) file.error = failure;
    file.queued.clear();
    for (RangeTask& other : tasks_) {
      if (other.file == file.file.get()) other.cancelled = true;
    }
  }
  if (file.in_flight == 0 && file.phase == FileState::Phase::kActive) last_range_ended(lock, file, changed);
  ++generation_;
  wake_.notify_all();
}

void ChunkScheduler::record_arrived(const RangeTask& task, std::optional<Error>& failure) {
  // What arrived is recorded even when the range failed: a resume must not fetch it again.
  if (task.position <= task.begin) return;
  try {
    task.file->complete_range({task.begin, task.position});
  } catch (const Error& journal_error) {
    if (!failure) failure = journal_error;
  }
}

void ChunkScheduler::last_range_ended(std::unique_lock<std::mutex>& lock, FileState& file, bool changed) {
  if (file.error) {
    fail_file(file);
  } else if (changed) {
    start_over(lock, file);
  } else if (file.queued.empty()) {
    const std::vector<store::ByteRange> missing = file.file->missing_ranges();
    if (missing.empty() || file.file->remote().size == 0) {
      finish_file(lock, file);
    } else {
      queue_missing(file);  // a range ended short without an error (cancelled split): fetch what is left
    }
  }
}

void ChunkScheduler::fail_file(FileState& file) {
  file.file->abandon();
  close_file(file);
}

void ChunkScheduler::close_file(FileState& file) {
  file.phase = FileState::Phase::kDone;
  file.source.reset();  // no range of it is in flight: what the source kept for it (a signed URL) is done with
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
  for (const FileState& file : files_) total += file.file->bytes_received();
  return total;
}

std::size_t ChunkScheduler::ranges_in_flight() const {
  const std::lock_guard lock(mutex_);
  return tasks_.size();
}

std::uint64_t ChunkScheduler::push_backs_noted() const {
  const std::lock_guard lock(mutex_);
  std::uint64_t total = 0;
  for (const FileState& file : files_) total += file.budget->push_backs_noted();
  return total;
}

}  // namespace hfget::transfer
