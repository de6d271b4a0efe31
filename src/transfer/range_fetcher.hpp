// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "hfget/progress.hpp"
#include "hfget/repo.hpp"
#include "hfget/secret.hpp"
#include "http/easy_request.hpp"
#include "transfer/file_job.hpp"
#include "transfer/hub_quota.hpp"

namespace hfget::transfer {

struct FetchSettings {
  std::string endpoint;
  const Secret* token = nullptr;
  RepoId repo;
  std::string commit;
  int max_attempts = 8;
  std::chrono::milliseconds retry_base_delay{1000};
  std::chrono::seconds retry_max_time{600};  // per range without progress, waits included; 0: no limit
  HubQuota* hub_quota = nullptr;             // shared by the download's connections; nullptr: none
};

/// A range of one file on one connection. `end` may be lowered by the scheduler while the transfer runs
/// (it hands the tail to an idle connection); `position` says how far this one got.
struct RangeTask {
  FileJob* job = nullptr;
  std::size_t file_index = 0;  // the scheduler's index of the file
  std::uint64_t begin = 0;
  std::atomic<std::uint64_t> end{0};
  std::atomic<std::uint64_t> position{0};
  std::atomic<bool> cancelled{false};  // the file failed elsewhere: stop at the next write
};

/// One connection (one libcurl handle, kept alive across ranges and files). Fetches a range through the
/// Hub's redirect to the CDN — the token only to the Hub's host — retrying transient failures from where
/// it stopped and asking the Hub for a fresh signed URL when the CDN refuses the old one.
class RangeFetcher {
 public:
  /// Sends through a libcurl handle of its own, made from `transport`.
  RangeFetcher(const FetchSettings& settings, ProgressSink& progress, http::TransportSettings transport,
               std::stop_token stop);
  /// Sends through `transport` (which must outlive the fetcher): unit tests pass a scripted one. `limits`
  /// gives the minimum rate that decides what counts as progress.
  RangeFetcher(const FetchSettings& settings, ProgressSink& progress, http::Transport& transport,
               const http::TransportSettings& limits, std::stop_token stop);

  /// Returns when [task.begin, task.end) is written (task.position == task.end) or the task was cancelled;
  /// throws Error naming the file when it cannot be fetched.
  void fetch(RangeTask& task);

 private:
  const FetchSettings& settings_;
  ProgressSink& progress_;
  std::unique_ptr<http::Transport> owned_transport_;  // with the first constructor only
  http::Transport& transport_;
  std::uint64_t progress_bytes_;  // what an attempt must move to count as progress (http::progress_threshold)
  std::stop_token stop_;
  std::vector<std::byte> batch_;  // received bytes not yet written; capacity fixed at construction
};

}  // namespace hfget::transfer
