// SPDX-License-Identifier: MIT
#include "transfer/bridge_source.hpp"

#include "transfer/range_fetcher.hpp"

namespace hfget::transfer {

BridgeSource::BridgeSource(const BridgeSettings& settings, const http::TransportSettings& transport,
                           ProgressSink& progress)
    : BridgeSource(
          settings, transport, [transport] { return std::make_unique<http::EasyRequest>(transport); }, progress) {}

BridgeSource::BridgeSource(const BridgeSettings& settings, const http::TransportSettings& limits,
                           TransportFactory make_transport, ProgressSink& progress)
    : settings_(settings), limits_(limits), make_transport_(std::move(make_transport)), progress_(progress) {
  settings_.hub_quota = &hub_quota_;
}

std::unique_ptr<FileSource> BridgeSource::open_file(const RemoteFile& file) {
  return std::make_unique<BridgeFile>(file);
}

std::unique_ptr<SourceConnection> BridgeSource::open_connection(std::stop_token stop) {
  return std::make_unique<RangeFetcher>(settings_, progress_, make_transport_(), limits_, std::move(stop));
}

}  // namespace hfget::transfer
