// SPDX-License-Identifier: MIT
#include "transfer/copy_estimate.hpp"

#include <algorithm>

#include "transfer/local_chunks.hpp"
#include "transfer/xet_fetcher.hpp"
#include "transfer/xet_source.hpp"

namespace hfget::transfer {
namespace {

constexpr std::uint64_t kBatchBytes = 10ULL << 30;  // the spec's advice, as the fetcher asks

}  // namespace

void estimate_copies(std::vector<PlannedFile>& plan, const DownloadOptions& options, const std::string& commit,
                     const store::Layout& layout, http::Transport& hub_transport,
                     const http::TransportFactory& make_transport, ProgressSink& progress, std::stop_token stop) {
  if (!options.xet || !options.reuse_chunks || options.force_download) return;
  LocalChunks local;
  local.add_from_target(layout, plan);
  if (local.empty()) return;
  XetSettings settings;
  settings.tokens = open_xet_tokens(plan, options, commit, hub_transport, stop);
  if (settings.tokens == nullptr) return;
  settings.max_attempts = std::min(options.hub.max_attempts, 3);
  XetShared shared;
  // A fetcher with no bridge half asks reconstructions and fetches nothing (as the prefetch's thread does).
  XetFetcher asker(settings, shared, nullptr, make_transport(), http::TransportSettings{}, progress, stop);
  for (PlannedFile& planned : plan) {
    const RemoteFile& file = planned.file;
    if (planned.complete || !file.xet_hash || file.size == 0) continue;
    std::uint64_t copy = 0;
    for (std::uint64_t first = 0; first < file.size; first += kBatchBytes) {
      const std::uint64_t last = std::min(file.size, first + kBatchBytes) - 1;
      const std::optional<xet::Reconstruction> batch = asker.plan_ahead(*file.xet_hash, first, last);
      if (!batch) break;
      std::uint64_t skip = batch->offset_into_first_range;  // bytes of the first term before `first`
      for (const xet::Term& term : batch->terms) {
        const std::uint64_t counted = term.data_bytes - std::min(skip, term.data_bytes);
        skip = 0;
        if (local.find(term)) copy += counted;
      }
    }
    planned.bytes_to_copy = std::min(copy, file.size);
  }
}

}  // namespace hfget::transfer
