// SPDX-License-Identifier: MIT
// The Xet source: how the Hub's own clients fetch Xet-stored files, and hfget's default for them. Each range of
// a file is asked of the CAS as a reconstruction (which chunk ranges of which xorbs make up those bytes, and
// the presigned URLs to fetch them with), then fetched and decoded chunk by chunk into the file at its offsets
// (transfer/xet_fetcher.hpp). The scheduler, the incoming file (journal, SHA-256, verdict) and the layouts do
// not know: to them a Xet range is a file range like any other, so resume, repair and publish are the bridge's.
// Files without a xet hash, and Xet files whose CAS cannot be reached, go over the LFS bridge instead, on the
// same connections: every file's state carries the bridge's (its signed URL lease) for that fall-back.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "hfget/download.hpp"
#include "hfget/progress.hpp"
#include "hub/xet_token.hpp"
#include "transfer/bridge_source.hpp"
#include "transfer/byte_source.hpp"
#include "transfer/local_chunks.hpp"
#include "transfer/reconstruction_prefetch.hpp"
#include "xet/chunk_layout.hpp"

namespace hfget::transfer {

struct XetSettings {
  /// The download's read token; nullptr (Xet disabled, or no token could be had): every file over the bridge.
  std::shared_ptr<hub::XetTokens> tokens;
  int max_attempts = 8;
  std::chrono::milliseconds retry_base_delay{1000};
  std::chrono::seconds retry_max_time{600};
  RateLimiter* rate_limiter = nullptr;  // --max-speed, shared with the bridge's connections
  /// Where the chunk layout of each file fetched over Xet is recorded once it is published (the target's
  /// state dir, store/chunk_layout_records.hpp); empty: not recorded.
  std::filesystem::path layout_records;
  /// Chunks the files already in the target hold, copied instead of fetched, and to which each file of this
  /// download is added once published, found in `target` (nullptr: no reuse; both must outlive the source).
  LocalChunks* local_chunks = nullptr;
  const store::Layout* target = nullptr;
  StageClock* clock = nullptr;  // where the time waiting for reconstructions goes (none: not counted)
};

/// A file's state in the download: the bridge's, and whether its ranges are fetched over Xet now.
class SourcedFile final : public BridgeFile {
 public:
  /// `layout_records`: where the file's chunk layout is recorded once it is published (empty: nowhere);
  /// `local`, `target`: where the published file is then offered to the files after it (nullptr: not).
  SourcedFile(const RemoteFile& file, bool over_xet, std::filesystem::path layout_records = {},
              LocalChunks* local = nullptr, const store::Layout* target = nullptr);
  bool over_xet() const noexcept { return over_xet_; }
  /// Collects the chunks decoded into the file, for its record; nullptr when none is kept.
  xet::ChunkLayoutBuilder* chunk_layout() noexcept { return chunk_layout_.get(); }
  /// Whether terms may be copied from local files: not once the file had to start over (a copied span may
  /// have been what was wrong: a local file edited since hfget checked it).
  bool copy_allowed() const noexcept { return copy_allowed_; }
  void on_published() override;
  void on_start_over() override;
  /// The CAS cannot serve the file: its remaining ranges go over the bridge (the bytes are the same ones).
  /// True for the call that switched it.
  bool fall_back_to_bridge() { return over_xet_.exchange(false); }
  /// True once: for the connection that reports the file's path first.
  bool first_to_report() { return !reported_.exchange(true); }

 private:
  std::atomic<bool> over_xet_;
  std::atomic<bool> reported_{false};
  std::atomic<bool> copy_allowed_{true};
  std::string path_;
  std::string sha256_;
  std::uint64_t size_;
  std::filesystem::path layout_records_;
  LocalChunks* local_;
  const store::Layout* target_;
  std::unique_ptr<xet::ChunkLayoutBuilder> chunk_layout_;
};

/// What the Xet connections of one download share.
struct XetShared {
  std::atomic<bool> v1_only{false};             // the CAS answered 404/501 to a V2 reconstruction: ask V1 from now on
  std::atomic<std::uint64_t> bytes_stored{0};   // file bytes written from decoded xorb ranges
  std::atomic<std::uint64_t> bytes_fetched{0};  // xorb bytes received (compressed)
  std::atomic<std::uint64_t> bytes_copied{0};   // file bytes copied from files already in the target
  std::atomic<bool> fallback_said{false};       // the first fall-back to the bridge was logged as a warning
  std::atomic<bool> cas_answered{false};        // the CAS answered once: a later connect failure is a blip
  std::atomic<int> files_failed_in_a_row{0};    // files whose Xet retries ran out, none served since
  std::atomic<bool> xet_off{false};             // too many of them: the rest of the download takes the bridge
  std::atomic<std::uint64_t> plans_asked{0};    // reconstructions asked of the CAS, ahead of time or not
  // Plans a connection asked for itself (none was ready ahead), and the time they took: for its first range
  // (nothing can be asked before it) and for the others.
  std::atomic<std::uint64_t> first_asks{0};
  std::atomic<std::uint64_t> first_ask_ns{0};
  std::atomic<std::uint64_t> later_asks{0};
  std::atomic<std::uint64_t> later_ask_ns{0};
  ReconstructionPrefetch* prefetch = nullptr;  // the next ranges' plans, asked ahead (nullptr: none)
};

/// The download's Xet read token, fetched now to learn whether Xet can be used: nullptr when Xet is off
/// (options.xet false), when no file still to fetch is stored in Xet, or when the Hub gives no usable token
/// (an endpoint or mirror without Xet, a token endpoint that is down) — said once in the log; the download then
/// goes over the bridge. Asked, and renewed later, over `hub_transport`: the one the listing used, idle once
/// the listing is done, and still connected to the Hub. A transport of its own would open a new connection
/// (a TCP and a TLS handshake) between the listing and the first plan, which every Xet range waits behind.
/// It must outlive the tokens, and nothing else may use it meanwhile.
std::shared_ptr<hub::XetTokens> open_xet_tokens(const std::vector<PlannedFile>& plan, const DownloadOptions& options,
                                                const std::string& commit, http::Transport& hub_transport,
                                                std::stop_token stop);

class XetSource final : public ByteSource {
 public:
  XetSource(const XetSettings& xet, const BridgeSettings& bridge, const http::TransportSettings& limits,
            TransportFactory make_transport, ProgressSink& progress);
  XetSource(const XetSource&) = delete;
  XetSource& operator=(const XetSource&) = delete;

  std::unique_ptr<FileSource> open_file(const RemoteFile& file) override;
  std::unique_ptr<SourceConnection> open_connection(std::stop_token stop) override;

  const XetShared& shared() const noexcept { return shared_; }
  /// Reconstructions that a connection found asked ahead of time.
  ReconstructionPrefetch::Takes plan_takes() const {
    return prefetch_ ? prefetch_->takes() : ReconstructionPrefetch::Takes{};
  }

 private:
  XetSettings xet_;
  http::TransportSettings limits_;
  TransportFactory make_transport_;
  ProgressSink& progress_;
  BridgeSource bridge_;
  XetShared shared_;
  std::unique_ptr<ReconstructionPrefetch> prefetch_;  // last: its thread uses the members above
};

}  // namespace hfget::transfer
