// SPDX-License-Identifier: MIT
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <vector>

#include "hfget/error.hpp"
#include "transfer/byte_source.hpp"
#include "transfer/connection_budget.hpp"
#include "transfer/incoming_file.hpp"
#include "transfer/range_task.hpp"

namespace hfget::transfer {

struct ChunkPlan {
  std::size_t max_active_files = 12;        // files open at once (--max-workers)
  std::uint64_t chunk_bytes = 32 << 20;     // a larger missing range is cut into chunks of this size
  std::uint64_t min_split_bytes = 4 << 20;  // the tail is re-split while ranges this large remain
  std::uint64_t tail_bytes = 0;             // the download's last bytes, cut into chunks half as large
};

/// A file to fetch: where its bytes go, and the source's state for it (nullptr in tests that fetch by hand).
struct ScheduledFile {
  std::unique_ptr<IncomingFile> file;
  std::unique_ptr<FileSource> source;
};

/// Hands (file, range) work to connections; knows nothing of HTTP or of the sources' internals. Files open in listing
/// order, at most max_active_files at once; each file's missing ranges are cut into chunks and queued. A connection
/// prefers a file of its own (its bytes then arrive in order), then opens the next file, then joins the open file with
/// the fewest connections, so a big shard is fetched over every idle connection. When nothing is queued, an idle
/// connection takes the second half of the largest range still in flight, so the last 1 % never crawls on
/// one connection ("stuck at 99 %"). The download's last tail_bytes (the last files to open, which end
/// together) are cut into chunks half as large, so that the last ranges in flight end close together without
/// being split: a range cut inside its request wastes what the server already sent, and over Xet the half it
/// hands on waits a CAS round trip for its plan before its first byte (on the GPU server the last ranges took
/// 110-140 ms after the first connection ran out of work, the bridge's split ones 50-70 ms). A file whose every byte is
/// in is verified and, when it matches, published at once through the publish step (crash safety: a finished file never
/// waits for the others). How many connections take work is a value it is given and that may change while it runs
/// (set_connections). Thread-safe; one scheduler per download, shared by every connection thread.
class ChunkScheduler final : public RangeExtension {
 public:
  ChunkScheduler(std::vector<ScheduledFile> files, ChunkPlan plan, PublishStep publish, std::stop_token stop);

  /// The next range for connection number `connection` (0-based) to fetch, or nullptr when every file is
  /// done or failed. May block while files are being opened or finished by other connections, and while the
  /// connection is beyond the current count (parked until the count is raised, or the download ends). May
  /// open a file itself (its lock, its resumed hash).
  RangeTask* next(std::size_t connection = 0);
  /// Reports a task's end: success (the range is written) or the error that ended it. Finishing a file
  /// (verify, then publish) happens here, on the reporting connection.
  void done(RangeTask* task, const std::optional<Error>& error);
  /// Hands the task the queued bytes right after it, up to `new_end`, when no connection has taken them.
  bool extend(RangeTask& task, std::uint64_t new_end) override;
  bool give_back(RangeTask& task, std::uint64_t new_end) override;
  std::uint64_t end_after_request(RangeTask& task) override;
  store::ByteRange queued_from(const RangeTask& task, std::uint64_t begin) override;
  std::size_t takers_per_file() override;
  std::vector<UpcomingRanges> next_files_start(std::size_t files, std::size_t count) override;

  /// How many connections take work from now on: connections numbered `count` and above park once their
  /// range is done; a raised count wakes the parked ones (the caller starts threads for numbers never seen).
  /// Unlimited until called.
  void set_connections(std::size_t count);
  std::size_t connections() const;

  /// The error each file ended with (nullopt: fetched or already complete), in the order of the jobs.
  std::vector<std::optional<Error>> errors() const;
  /// Whether each file was fetched and published, in the order of the jobs.
  std::vector<bool> fetched() const;
  std::size_t files_fetched() const;
  std::uint64_t bytes_received() const;
  /// Ranges being fetched now: how many connections are busy (the connection controller's sample).
  std::size_t ranges_in_flight() const;
  /// Push-backs (refusals, 503s, resets) seen so far, over every file (ConnectionBudget::push_backs_noted).
  std::uint64_t push_backs_noted() const;

 private:
  struct FileState {
    std::unique_ptr<IncomingFile> file;
    std::unique_ptr<FileSource> source;
    std::unique_ptr<ConnectionBudget> budget = std::make_unique<ConnectionBudget>();  // the source reports to it
    enum class Phase { kWaiting, kOpening, kActive, kFinishing, kDone } phase = Phase::kWaiting;
    std::deque<store::ByteRange> queued;  // missing ranges, cut into chunks when taken (take_queued)
    // Chunks that start at or past this offset are half as large: the file's part of the download's tail.
    std::uint64_t finer_from = std::numeric_limits<std::uint64_t>::max();
    int in_flight = 0;
    bool fetched = false;
    std::optional<Error> error;
  };

  void apply_refusals();                                           // requires mutex_
  RangeTask* take_queued(bool only_idle_files);                    // requires mutex_
  RangeTask* start_task(FileState& file, store::ByteRange range);  // requires mutex_
  // The range a connection takes from a gap of the file.
  store::ByteRange first_chunk(const FileState& file, const store::ByteRange& gap) const;
  // The queued gap that starts where `task` ends, while the task is not cancelled and its file is active
  // (nullopt otherwise: no connection may take bytes of it then); requires mutex_.
  std::optional<std::deque<store::ByteRange>::iterator> queued_after(const RangeTask& task);
  RangeTask* split_tail();              // requires mutex_
  void queue_missing(FileState& file);  // requires mutex_
  void open_file(std::unique_lock<std::mutex>& lock, FileState& file);
  void record_arrived(const RangeTask& task, std::optional<Error>& failure);
  // The file's last range in flight ended (`changed`: the file changed on the server meanwhile).
  void last_range_ended(std::unique_lock<std::mutex>& lock, FileState& file, bool changed);
  void finish_file(std::unique_lock<std::mutex>& lock, FileState& file);
  // Outside the lock: verify, then publish or discard; true when the file starts over (another download).
  bool verify_and_publish(FileState& file, std::optional<Error>& error);
  void start_over(std::unique_lock<std::mutex>& lock, FileState& file);  // the file changed on the server
  void close_file(FileState& file);                                      // requires mutex_; the file is done
  void fail_file(FileState& file);  // requires mutex_; file.error is set: keeps what arrived, closes it
  bool all_done() const;            // requires mutex_

  ChunkPlan plan_;
  PublishStep publish_;
  std::stop_token stop_;
  mutable std::mutex mutex_;
  std::condition_variable_any wake_;
  std::vector<FileState> files_;
  std::list<RangeTask> tasks_;    // in flight; stable addresses
  std::uint64_t generation_ = 0;  // bumped (and wake_ notified) whenever a waiting connection may find work
  std::size_t next_to_open_ = 0;
  std::size_t connections_ = static_cast<std::size_t>(-1);  // connections that take work (set_connections)
  // The files opened and not done yet, in the order they were opened: at most plan_.max_active_files, so
  // that choosing the next range costs the same for a 100,000-file dataset as for a 10-file model.
  std::vector<std::size_t> open_files_;
};

}  // namespace hfget::transfer
