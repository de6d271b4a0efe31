// SPDX-License-Identifier: MIT
// Small steps of `download` that its sibling files (fetch_all, offline_snapshot) share.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hfget/download.hpp"
#include "http/easy_request.hpp"
#include "hub/hub_client.hpp"
#include "store/layout.hpp"

namespace hfget::transfer {

http::TransportSettings transport_settings(const DownloadOptions& options);
hub::HubClientSettings hub_settings(const DownloadOptions& options);
std::unique_ptr<store::Layout> open_layout(const DownloadOptions& options, const std::string& commit);
/// Each selected file with whether it is already complete on disk (then it costs no request).
std::vector<PlannedFile> plan_against_disk(const std::vector<RemoteFile>& selected, const store::Layout& layout);

}  // namespace hfget::transfer
