// SPDX-License-Identifier: MIT
// The LFS bridge: today's (and the only) byte source. Every file is fetched from the Hub's /resolve/ URL at
// the pinned commit; the Hub answers an LFS file with a redirect to a signed CDN URL, which the file's
// connections share (BridgeFile) until the CDN refuses it. The per-connection work (ranged GETs, redirects,
// retries) is RangeFetcher's (transfer/range_fetcher.hpp).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>

#include "hfget/progress.hpp"
#include "hfget/repo.hpp"
#include "hfget/secret.hpp"
#include "http/easy_request.hpp"
#include "http/transport.hpp"
#include "transfer/byte_source.hpp"
#include "transfer/hub_quota.hpp"
#include "transfer/rate_limiter.hpp"
#include "transfer/signed_url_lease.hpp"

namespace hfget::transfer {

struct BridgeSettings {
  std::string endpoint;
  const Secret* token = nullptr;
  RepoId repo;
  std::string commit;
  int max_attempts = 8;
  std::chrono::milliseconds retry_base_delay{1000};
  std::chrono::seconds retry_max_time{600};  // per range without progress, waits included; 0: no limit
  HubQuota* hub_quota = nullptr;             // shared by the download's connections; nullptr: none
  RateLimiter* rate_limiter = nullptr;       // --max-speed, shared by the download's connections; nullptr: none
};

/// The bridge's state for one file: its signed CDN URL, shared by the file's connections.
class BridgeFile : public FileSource {
 public:
  explicit BridgeFile(const RemoteFile& file) : signed_url(file.is_lfs()) {}
  SignedUrlLease signed_url;
};

using http::TransportFactory;

class BridgeSource final : public ByteSource {
 public:
  /// Each connection sends through a libcurl handle of its own, made from `transport`.
  BridgeSource(const BridgeSettings& settings, const http::TransportSettings& transport, ProgressSink& progress);
  /// Each connection sends through what `make_transport` makes; `limits` gives the minimum rate that decides
  /// what counts as progress.
  BridgeSource(const BridgeSettings& settings, const http::TransportSettings& limits, TransportFactory make_transport,
               ProgressSink& progress);
  BridgeSource(const BridgeSource&) = delete;
  BridgeSource& operator=(const BridgeSource&) = delete;

  std::unique_ptr<FileSource> open_file(const RemoteFile& file) override;
  std::unique_ptr<SourceConnection> open_connection(std::stop_token stop) override;

 private:
  BridgeSettings settings_;
  HubQuota hub_quota_;  // the Hub's rate limit is the whole download's (settings_.hub_quota points here)
  http::TransportSettings limits_;
  TransportFactory make_transport_;
  ProgressSink& progress_;
};

}  // namespace hfget::transfer
