// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>

#include "hfget/progress.hpp"
#include "hfget/repo.hpp"
#include "hfget/secret.hpp"
#include "http/easy_request.hpp"
#include "store/layout.hpp"
#include "crypto/content_hasher.hpp"

namespace hfget::transfer {

struct FetchSettings {
  std::string endpoint;
  const Secret* token = nullptr;
  RepoId repo;
  std::string commit;
  int max_attempts = 8;
  std::chrono::milliseconds retry_base_delay{1000};
};

enum class FetchOutcome { kDownloaded, kAlreadyComplete };

/// Downloads one file into its layout: lock, resume from the partial file, ranged GETs through the Hub's
/// redirect to the CDN (token to the Hub host only), hash while streaming, verify, publish. One per worker;
/// it reuses the worker's connection.
class FileFetcher {
 public:
  FileFetcher(const FetchSettings& settings, store::Layout& layout, ProgressSink& progress,
              http::TransportSettings transport, std::stop_token stop);

  /// Throws Error naming the file when it cannot be fetched intact.
  FetchOutcome fetch(const RemoteFile& file);
  std::uint64_t bytes_received() const noexcept { return bytes_received_; }

 private:
  void download_remaining(const RemoteFile& file, store::PartialFile& partial,
                          std::optional<crypto::ContentHasher>& hasher);

  const FetchSettings& settings_;
  store::Layout& layout_;
  ProgressSink& progress_;
  http::EasyRequest request_;
  std::stop_token stop_;
  std::uint64_t bytes_received_ = 0;
};

}  // namespace hfget::transfer
