// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "hfget/progress.hpp"
#include "http/retry_policy.hpp"
#include "http/transport.hpp"
#include "transfer/xet_range_sink.hpp"
#include "transfer/xet_source.hpp"
#include "xet/reconstruction.hpp"

namespace hfget::transfer {

/// One connection of the Xet source. A range of a Xet file is fetched as: the reconstruction of exactly the
/// bytes still missing (V2, or V1 once the CAS has said it has no V2), then each run of its terms as one GET of
/// the presigned xorb URL with exactly the byte range the reconstruction gave (no token: the signature is the
/// credential), decoded into the file (XetRangeSink). Every failure asks for a new reconstruction of what is
/// still missing, which also renews expired presigned URLs; a 401 renews the read token. When the CAS cannot
/// serve the file (unreachable, no such file, retries used up) the file's remaining ranges go over the
/// bridge, on this connection's bridge half, which also serves the files that have no xet hash.
class XetFetcher final : public SourceConnection {
 public:
  XetFetcher(const XetSettings& settings, XetShared& shared, std::unique_ptr<SourceConnection> bridge,
             std::unique_ptr<http::Transport> transport, const http::TransportSettings& limits, ProgressSink& progress,
             std::stop_token stop);

  void fetch(RangeTask& task) override;
  /// For the reconstruction prefetch's thread, whose fetcher has no bridge half and fetches nothing: the plan
  /// of bytes [first, last] of a file, nullopt when the CAS did not give one.
  std::optional<xet::Reconstruction> plan_ahead(const std::string& xet_hash, std::uint64_t first, std::uint64_t last);

 private:
  // Why an attempt over Xet did not end the range, and what the retry policy is to see.
  struct Failure {
    http::Attempt attempt{};
    std::string reason{};
    std::optional<std::chrono::seconds> retry_after{};
    bool push_back = false;        // the CDN or CAS shed load (429/503, a reset, a body cut short)
    bool cas_unavailable = false;  // retrying over Xet will not help: the file goes over the bridge
  };
  std::optional<Failure> fetch_once(RangeTask& task, const std::string& xet_hash);
  /// `v1`: V1 even while the download still asks V2 (after this file's V2 answered 404 or 501).
  std::optional<Failure> ask_reconstruction(const std::string& xet_hash, std::uint64_t first, std::uint64_t last,
                                            xet::Reconstruction& plan, bool v1 = false);
  Failure transport_failure(const http::HttpResponse& response) const;
  Failure status_failure(const http::HttpResponse& response, const std::shared_ptr<const hub::XetAccess>& access) const;
  /// `asked_end`: the end of the range the plan was asked for (the task's end may have been lowered since).
  std::optional<Failure> fetch_terms(RangeTask& task, const xet::Reconstruction& plan, std::uint64_t asked_end);
  std::optional<Failure> fetch_run(RangeTask& task, const xet::Reconstruction& plan, std::size_t first_term,
                                   std::size_t end_term, TaskWriter& writer, ChunkKeeper keep,
                                   std::uint32_t decode_until);
  void fall_back(RangeTask& task, SourcedFile& state, const std::string& why);
  void ask_ahead(RangeTask& task, const std::string& xet_hash);
  void ask_ahead_if_due(RangeTask& task);

  const XetSettings& settings_;
  XetShared& shared_;
  std::unique_ptr<SourceConnection> bridge_;
  std::unique_ptr<http::Transport> transport_;
  ProgressSink& progress_;
  std::uint64_t progress_bytes_;
  std::stop_token stop_;
  std::vector<std::byte> batch_;
  std::vector<std::byte> copy_buffer_;  // one chunk read from a local file (allocated at the first copy)
  std::uint64_t bytes_copied_ = 0;      // by this connection from local files: progress that is not the CAS's
  bool planned_once_ = false;           // this connection has had a plan: its next ones could be asked ahead
  bool replan_ = false;                 // fetch_terms stopped early: the range was split, its new end needs a new plan
  const std::string* ask_ahead_for_ = nullptr;  // the file whose next plans wait for this range's first answer
};

}  // namespace hfget::transfer
