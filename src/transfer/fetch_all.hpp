// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "hfget/download.hpp"
#include "hfget/error.hpp"
#include "http/transport.hpp"
#include "store/layout.hpp"
#include "transfer/byte_source.hpp"
#include "transfer/chunk_scheduler.hpp"
#include "transfer/connection_pool.hpp"
#include "transfer/connection_steering.hpp"
#include "transfer/incoming_file.hpp"

namespace hfget::transfer {

struct FetchResults {
  std::vector<std::optional<Error>> errors;  // per planned file
  std::optional<Error> stop_cause;           // the failure that stopped every connection (a full disk)
  std::uint64_t bytes_received = 0;
  std::uint64_t bytes_over_xet = 0;  // file bytes written from Xet xorb ranges
  std::uint64_t xorb_bytes_fetched = 0;
  std::uint64_t bytes_copied = 0;  // of bytes_over_xet, copied from files already in the target
  std::size_t files_fetched = 0;
  ConnectionTimes connection_times;
};

/// How the engine fetches, whatever the source.
struct FetchSettings {
  std::size_t connections = 16;  // fixed, unless `steering` is set
  /// Set: the connection controller picks the count while the download runs (connection_steering.hpp) and
  /// `connections` is not used. Unset: `connections` stays for the whole download.
  std::optional<SteeringSettings> steering;
  ChunkPlan chunks;
  bool force_download = false;  // every planned file replaces the copy on disk
  IncomingFileSettings file;    // replace_existing is set per file from the plan and force_download
  StageClock* clock = nullptr;  // where the connections' time goes (none: not counted)
  /// Called once the connections are started, with the handle that changes their count while the download
  /// runs (the connection controller's hook); the pool is gone when fetch_files returns.
  std::function<void(ConnectionPool&)> on_started;
};

/// The fetch stage: fetches every incomplete file of the plan from `source` over settings.connections
/// threads, each owning one connection of the source; the only shared state is the chunk scheduler and the
/// stop source. Each file is verified as its last byte arrives and, when it matches, published at once
/// through `publish`.
FetchResults fetch_files(const std::vector<PlannedFile>& plan, const FetchSettings& settings, ByteSource& source,
                         store::Layout& layout, const PublishStep& publish, ProgressSink& progress,
                         std::stop_token outer_stop);

/// fetch_files over Xet for the files stored there (when a read token can be had) and the Hub's LFS bridge for
/// the rest, with the settings `options` give (read here and nowhere else of
/// the engine).
FetchResults fetch_all(const std::vector<PlannedFile>& plan, const DownloadOptions& options, const std::string& commit,
                       std::uint64_t bytes_to_fetch, store::Layout& layout, const PublishStep& publish,
                       http::Transport& hub_transport, const http::TransportFactory& make_transport,
                       ProgressSink& progress, std::stop_token outer_stop);

}  // namespace hfget::transfer
