// SPDX-License-Identifier: MIT
#include "transfer/xet_source.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "hub/hub_client.hpp"
#include "store/chunk_layout_records.hpp"
#include "transfer/xet_fetcher.hpp"

namespace hfget::transfer {
namespace {

// The token's requests: the Hub client's rules (the Hub token to the Hub only, its errors in words), with
// fewer attempts than a file gets, so that a Hub without Xet costs seconds before the bridge takes over.
constexpr int kTokenAttempts = 3;

struct TokenRequester {
  HubConnection hub;
  RepoId repo;
  std::string commit;
  http::Transport* transport;
  std::stop_token stop;

  hub::XetAccess operator()() const {
    hub::HubClient client(hub, *transport, stop);
    return client.xet_read_access(repo, commit);
  }
};

}  // namespace

SourcedFile::SourcedFile(const RemoteFile& file, bool over_xet, std::filesystem::path layout_records,
                         LocalChunks* local, const store::Layout* target)
    : BridgeFile(file),
      over_xet_(over_xet),
      path_(file.path),
      sha256_(file.lfs_sha256.value_or("")),
      size_(file.size),
      layout_records_(std::move(layout_records)),
      local_(local),
      target_(target) {
  if (over_xet && !layout_records_.empty() && file.lfs_sha256) {
    chunk_layout_ = std::make_unique<xet::ChunkLayoutBuilder>(file.size);
  }
}

void SourcedFile::on_published() {
  if (chunk_layout_ == nullptr) return;
  xet::ChunkLayout layout = chunk_layout_->layout();
  try {
    store::save_chunk_layout(layout_records_, sha256_, layout);
  } catch (const std::exception& error) {
    // The file is published and correct: without its record, a later revision only fetches what it could
    // have copied.
    spdlog::warn("{}: could not record its Xet chunk layout ({}); a later revision will fetch it whole", path_,
                 error.what());
  }
  // The files after it in this download may name the same chunks (a consolidated file beside its shards).
  if (local_ != nullptr && target_ != nullptr) {
    if (std::optional<std::filesystem::path> content = target_->find_content(sha256_, size_)) {
      local_->add(std::move(*content), std::move(layout));
    }
  }
  chunk_layout_.reset();  // its memory is not needed any more
}

void SourcedFile::on_start_over() {
  if (chunk_layout_ != nullptr) chunk_layout_->clear();
  copy_allowed_ = false;
}

std::shared_ptr<hub::XetTokens> open_xet_tokens(const std::vector<PlannedFile>& plan, const DownloadOptions& options,
                                                const std::string& commit, http::Transport& hub_transport,
                                                std::stop_token stop) {
  if (!options.xet) return nullptr;
  const bool any = std::any_of(plan.begin(), plan.end(), [](const PlannedFile& planned) {
    return !planned.complete && planned.file.xet_hash && planned.file.size > 0;
  });
  if (!any) return nullptr;
  auto requester =
      std::make_shared<TokenRequester>(TokenRequester{options.hub, options.repo, commit, &hub_transport, stop});
  requester->hub.max_attempts = std::min(requester->hub.max_attempts, kTokenAttempts);
  auto tokens = std::make_shared<hub::XetTokens>([requester] { return (*requester)(); });
  try {
    const std::shared_ptr<const hub::XetAccess> access = tokens->current();
    spdlog::info("Xet: read token for {} at {}, CAS {}", options.repo.name, commit.substr(0, 12), access->cas_url);
  } catch (const Error& error) {
    if (error.code() == ErrorCode::kInterrupted) throw;
    spdlog::warn("Xet: no read token ({}); fetching every file over the LFS bridge", error.what());
    return nullptr;
  }
  return tokens;
}

XetSource::XetSource(const XetSettings& xet, const BridgeSettings& bridge, const http::TransportSettings& limits,
                     TransportFactory make_transport, ProgressSink& progress)
    : xet_(xet),
      limits_(limits),
      make_transport_(make_transport),
      progress_(progress),
      bridge_(bridge, limits, make_transport, progress) {
  if (xet_.tokens == nullptr) return;
  prefetch_ = std::make_unique<ReconstructionPrefetch>([this](std::stop_token stop) -> ReconstructionPrefetch::Ask {
    auto asker = std::make_shared<XetFetcher>(xet_, shared_, nullptr, make_transport_(), limits_, progress_, stop);
    return [asker](const std::string& xet_hash, std::uint64_t first, std::uint64_t last) {
      return asker->plan_ahead(xet_hash, first, last);
    };
  });
  shared_.prefetch = prefetch_.get();
}

std::unique_ptr<FileSource> XetSource::open_file(const RemoteFile& file) {
  // An empty file has no reconstruction worth asking for: the bridge's one request serves it.
  const bool over_xet = xet_.tokens != nullptr && file.xet_hash.has_value() && file.size > 0;
  return std::make_unique<SourcedFile>(file, over_xet, xet_.layout_records, xet_.local_chunks, xet_.target);
}

std::unique_ptr<SourceConnection> XetSource::open_connection(std::stop_token stop) {
  std::unique_ptr<SourceConnection> bridge = bridge_.open_connection(stop);
  return std::make_unique<XetFetcher>(xet_, shared_, std::move(bridge), make_transport_(), limits_, progress_,
                                      std::move(stop));
}

}  // namespace hfget::transfer
