// SPDX-License-Identifier: MIT
// Where a file's bytes come from, behind three small interfaces, so that the scheduler, the incoming file
// and the layouts do not change when a second way of fetching is added. Today's only source is the LFS
// bridge (transfer/bridge_source.hpp: the Hub's /resolve/ redirect to a signed CDN URL, ranged GETs of the
// file itself). A Xet source plugs in here too: its FileSource holds the file's reconstruction (asked once
// per file: which byte ranges of which xorbs make up which file offsets), and its SourceConnection fetches
// the xorb ranges that cover a RangeTask, decompresses them and hands the file's bytes to
// IncomingFile::store at their file offsets. The scheduler still hands out plain file ranges, and the hash,
// journal, resume and publish stay as they are. See docs/design.md, "Byte sources".
#pragma once

#include <memory>
#include <stop_token>

#include "hfget/repo.hpp"
#include "transfer/range_task.hpp"

namespace hfget::transfer {

/// A source's state for one file, shared by the connections that fetch its ranges (the bridge: the signed
/// CDN URL and who is resolving it). Opaque to the scheduler, which only carries it in each RangeTask.
class FileSource {
 public:
  virtual ~FileSource() = default;
  /// The file was verified and published: what the source learnt of its bytes on the way may be kept.
  virtual void on_published() {}
  /// The file is fetched again from its first byte (its hash did not match, or it changed on the server): what
  /// the source learnt of the bytes before is void.
  virtual void on_start_over() {}
};

/// One connection of a source: its transport (kept alive across ranges and files) and its buffers. Used by
/// one thread at a time.
class SourceConnection {
 public:
  virtual ~SourceConnection() = default;
  /// Returns when [task.begin, task.end) is stored in task.file (task.position == task.end), when the task
  /// was cancelled, or when the file asked to start over (it changed on the server); throws Error naming the
  /// file when the range cannot be fetched. Reports refused connections to task.budget.
  virtual void fetch(RangeTask& task) = 0;
};

/// A way of fetching a download's files: one per download, shared by its connection threads. Thread-safe.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// The state the source keeps for `file` while it is being fetched (made when the file opens).
  virtual std::unique_ptr<FileSource> open_file(const RemoteFile& file) = 0;
  /// A connection for one thread; `stop` ends its waits and requests.
  virtual std::unique_ptr<SourceConnection> open_connection(std::stop_token stop) = 0;
};

}  // namespace hfget::transfer
