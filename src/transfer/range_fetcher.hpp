// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "hfget/progress.hpp"
#include "http/easy_request.hpp"
#include "http/range_answer.hpp"
#include "http/redirect_follower.hpp"
#include "http/retrier.hpp"
#include "transfer/bridge_source.hpp"
#include "transfer/byte_source.hpp"

namespace hfget::transfer {

/// One connection of the bridge source (one transport, kept alive across ranges and files). Fetches a range
/// through the Hub's redirect to the CDN — the token only to the Hub's origin — retrying transient failures
/// from where it stopped and asking the Hub for a fresh signed URL when the CDN refuses the old one.
/// task.source must be the BridgeFile the bridge source made for task.file.
class RangeFetcher final : public SourceConnection {
 public:
  /// Sends through a libcurl handle of its own, made from `transport`.
  RangeFetcher(const BridgeSettings& settings, ProgressSink& progress, const http::TransportSettings& transport,
               std::stop_token stop);
  /// Sends through `transport`. `limits` gives the minimum rate that decides what counts as progress.
  RangeFetcher(const BridgeSettings& settings, ProgressSink& progress, std::unique_ptr<http::Transport> transport,
               const http::TransportSettings& limits, std::stop_token stop);
  /// Sends through `transport` (which must outlive the fetcher): unit tests pass a scripted one.
  RangeFetcher(const BridgeSettings& settings, ProgressSink& progress, http::Transport& transport,
               const http::TransportSettings& limits, std::stop_token stop);

  /// Returns when [task.begin, task.end) is written (task.position == task.end), the task was cancelled or
  /// the file changed on the server; throws Error naming the file when it cannot be fetched.
  void fetch(RangeTask& task) override;

 private:
  // One request chain's result: the answer, the URL that gave it, and what the body sink made of the body.
  struct Sent {
    http::HttpResponse response;
    std::string url;
    bool file_changed = false;
    std::optional<std::string> rejection;
    std::uint64_t received = 0;
  };
  Sent send(RangeTask& task, BridgeFile& source, const std::string& resolve_url);
  // After an answer that did not end the range: acts on the verdict (a new signed URL, a refusal, the Hub's
  // quota) and waits as the retry policy says; throws when the file cannot be fetched.
  void prepare_retry(RangeTask& task, BridgeFile& source, const Sent& sent, const http::RangeClassification& verdict,
                     http::Retrier& retrier);

  const BridgeSettings& settings_;
  ProgressSink& progress_;
  std::unique_ptr<http::Transport> owned_transport_;  // unless a transport was lent
  http::Transport& transport_;
  http::RedirectFollower follower_;
  std::uint64_t progress_bytes_;  // what an attempt must move to count as progress (http::progress_threshold)
  std::stop_token stop_;
  std::vector<std::byte> batch_;  // received bytes not yet written; capacity fixed at construction
};

}  // namespace hfget::transfer
