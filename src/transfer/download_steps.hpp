// SPDX-License-Identifier: MIT
// Small steps of `download` that its sibling files (fetch_all, offline_snapshot) share.
#pragma once

#include <vector>

#include "hfget/download.hpp"
#include "http/easy_request.hpp"
#include "store/layout.hpp"

namespace hfget::transfer {

/// The libcurl settings of the download's connections: those of its Hub connection.
http::TransportSettings transport_settings(const DownloadOptions& options);
/// Each selected file with whether it is already complete on disk (then it costs no request).
std::vector<PlannedFile> plan_against_disk(const std::vector<RemoteFile>& selected, const store::Layout& layout);

}  // namespace hfget::transfer
