// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "transfer/connection_budget.hpp"
#include "transfer/incoming_file.hpp"

namespace hfget::transfer {

class FileSource;
struct RangeTask;

/// The first ranges of a file the scheduler opens next, before it is opened (RangeExtension::next_files_start).
struct UpcomingRanges {
  const RemoteFile* file = nullptr;
  std::vector<store::ByteRange> ranges;
};

/// Lets a connection take the bytes right after its range while no other connection has them (the
/// scheduler implements it). The Xet source needs it: a range that ends inside a chunk fetches that whole
/// chunk, and the next range would fetch it again; taking the rest of the chunk costs nothing more.
class RangeExtension {
 public:
  virtual ~RangeExtension() = default;
  /// Raises task.end to `new_end` when [task.end, new_end) is still waiting for a connection; false when any
  /// of it is another connection's (or done), and then nothing changes.
  virtual bool extend(RangeTask& task, std::uint64_t new_end) = 0;
  /// Lowers task.end to `new_end` (past task.position) and puts [new_end, task.end) back in front of the
  /// queued bytes right after the range, so that the next range starts at `new_end`; false when the bytes
  /// after the range are not waiting for a connection (another connection has them, or the file ends
  /// there), and then nothing changes. The Xet source ends a range where it would cross into another xorb.
  virtual bool give_back(RangeTask& task, std::uint64_t new_end) = 0;
  /// The range's end, read under the same lock as the splits that lower it, once the connection has set
  /// task.requested_until for the request it is about to send: a split seen after this cuts at or past it.
  virtual std::uint64_t end_after_request(RangeTask& task) = 0;
  /// The range a connection would be handed from the first byte of the task's file still queued at or after
  /// `begin`, once the queued bytes before `begin` are taken as the scheduler cuts them ({0, 0} when none is
  /// queued there, or the task was cancelled): with `begin` at the task's end, the range the next connection
  /// to take this file's work gets; from that range's end, the one after it. The Xet source asks their
  /// reconstructions ahead of time.
  virtual store::ByteRange queued_from(const RangeTask& task, std::uint64_t begin) = 0;
  /// Ranges in flight for each place a connection can take work from (an open file with bytes queued, or a
  /// file it may open), rounded up, at least 1: about how many ranges of a file other connections take
  /// before the range after this one is planned. One connection alone, or one per file, takes them in turn.
  virtual std::size_t takers_per_file() = 0;
  /// For each of the next `files` files to open, in the order they will open (fewer near the end; empty
  /// files left out), the first `count` ranges (fewer when the file has fewer) that the first connections to
  /// it will be handed, if it starts from its first byte (nothing of it kept from an earlier run; the scheduler
  /// cannot know before it opens it): the Xet source asks their plans ahead as well, so that a file just
  /// opened does not wait for its first ones.
  virtual std::vector<UpcomingRanges> next_files_start(std::size_t files, std::size_t count) = 0;
};

/// A range of one file on one connection: the unit of work the scheduler hands out and a source's connection
/// fetches. `end` may be lowered by the scheduler while the transfer runs (it hands the tail to an idle
/// connection); `position` says how far this one got.
struct RangeTask {
  IncomingFile* file = nullptr;        // where the bytes go
  FileSource* source = nullptr;        // the file's state in the byte source that fetches it
  ConnectionBudget* budget = nullptr;  // where the source reports a refused connection
  std::size_t file_index = 0;          // the scheduler's index of the file
  std::uint64_t begin = 0;
  std::atomic<std::uint64_t> end{0};
  std::atomic<std::uint64_t> position{0};
  std::atomic<bool> cancelled{false};   // the file failed elsewhere: stop at the next write
  RangeExtension* extension = nullptr;  // nullptr: the range cannot grow
  /// Where the bytes the connection has asked the server for end, when the source knows it and it is before
  /// `end` (the Xet source: it asks a xorb range at a time). Cutting the range there wastes nothing: the
  /// request in flight is not cut short. 0: the request in flight may run to `end` (the bridge).
  std::atomic<std::uint64_t> requested_until{0};
  /// When the scheduler handed the range out: with how far `position` got since, how fast it is coming.
  std::chrono::steady_clock::time_point started{};
};

}  // namespace hfget::transfer
