// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "hfget/error.hpp"
#include "hfget/repo.hpp"

namespace hfget {

struct DownloadPlanSummary {
  std::string_view commit;
  std::size_t files_selected = 0;
  std::size_t files_to_fetch = 0;
  std::uint64_t bytes_selected = 0;
  std::uint64_t bytes_already_complete = 0;  // files that need no request
  std::uint64_t bytes_resumable = 0;         // already in partial files from earlier runs
  std::size_t shards_selected = 0;           // weight files (see is_weight_file)
  std::size_t shards_already_complete = 0;
};

/// True for the files progress counts as shards: *.safetensors, *.gguf, and PyTorch checkpoints
/// (pytorch_model*.bin, *-of-NNNNN.bin / .pt / .pth).
bool is_weight_file(std::string_view path) noexcept;

/// How a file's bytes are fetched: the Xet protocol (reconstruction, xorb ranges) or the LFS bridge (the Hub's
/// resolve redirect to a signed CDN URL of the whole file).
enum class TransferPath { kXet, kBridge };
std::string_view to_string(TransferPath path) noexcept;

/// Events of a download, reported from worker threads (implementations synchronise). The library never
/// writes to a terminal; the CLI renders these for a TTY, a log file or JSON lines.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  /// Another hfget holds the target; this run waits for it (holder_pid when known).
  virtual void on_waiting_for_target(std::optional<long> /*holder_pid*/) {}
  virtual void on_plan(const DownloadPlanSummary& /*plan*/) {}
  /// `resumed_bytes` were already on disk from an earlier run.
  virtual void on_file_started(const RemoteFile& /*file*/, std::uint64_t /*resumed_bytes*/) {}
  /// New bytes written for `file` (received over the network, or copied: on_bytes_copied).
  virtual void on_bytes(const RemoteFile& /*file*/, std::uint64_t /*bytes*/) {}
  /// Of the bytes on_bytes reports for `file`, `bytes` were copied from a file already in the target (Xet
  /// chunks an earlier revision holds) instead of received; reported around the time they are written.
  virtual void on_bytes_copied(const RemoteFile& /*file*/, std::uint64_t /*bytes*/) {}
  /// Bytes thrown away (server ignored Range, hash mismatch): progress goes back by that much.
  virtual void on_bytes_discarded(const RemoteFile& /*file*/, std::uint64_t /*bytes*/) {}
  virtual void on_retry(const RemoteFile& /*file*/, int /*attempt*/, std::string_view /*reason*/,
                        std::chrono::milliseconds /*delay*/) {}
  /// The path `file` is fetched over, when its first range starts, and again if it falls back from Xet to the
  /// bridge; `reason` says why in words.
  virtual void on_file_path(const RemoteFile& /*file*/, TransferPath /*path*/, std::string_view /*reason*/) {}
  virtual void on_file_done(const RemoteFile& /*file*/) {}
  virtual void on_file_failed(const RemoteFile& /*file*/, const Error& /*error*/) {}
  /// The download now uses `count` connections, for `reason` ("adding 8: +23% from the last batch", "fixed by
  /// --connections"); reported at the start and on every change, from one thread at a time.
  virtual void on_connections(std::size_t /*count*/, std::string_view /*reason*/) {}
};

}  // namespace hfget
