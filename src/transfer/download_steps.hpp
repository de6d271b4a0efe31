// SPDX-License-Identifier: MIT
// Small steps of `download` that its sibling files (fetch_all, offline_snapshot) share.
#pragma once

#include <stop_token>
#include <vector>

#include "hfget/download.hpp"
#include "http/easy_request.hpp"
#include "http/transport.hpp"
#include "store/layout.hpp"

namespace hfget::transfer {

/// The libcurl settings of the download's connections: those of its Hub connection.
http::TransportSettings transport_settings(const DownloadOptions& options);
/// download() with every request sent through what `make_transport` makes (one for the Hub's metadata, one
/// per connection): download() passes libcurl's, unit tests a scripted one, so the whole download runs without
/// sockets.
DownloadReport download_through(const DownloadOptions& options, ProgressSink& progress, std::stop_token stop,
                                const http::TransportFactory& make_transport);
/// Each selected file with whether it is already complete on disk (then it costs no request).
std::vector<PlannedFile> plan_against_disk(const std::vector<RemoteFile>& selected, const store::Layout& layout);

}  // namespace hfget::transfer
