// SPDX-License-Identifier: MIT
// What --dry-run says of chunk reuse (issue 19): per Xet file still to fetch, how many of its bytes the files
// already in the target hold (transfer/local_chunks.hpp), so that the plan shows copied against fetched
// bytes before anything is written. Asking costs one read token and one reconstruction per such file (per
// 10 GB of it), and is done only when the target has chunk records at all.
#pragma once

#include <stop_token>
#include <string>
#include <vector>

#include "hfget/download.hpp"
#include "hfget/progress.hpp"
#include "http/transport.hpp"
#include "store/layout.hpp"

namespace hfget::transfer {

/// Sets PlannedFile::bytes_to_copy for each file still to fetch over Xet. Best effort: a file whose
/// reconstruction cannot be had (no token, the CAS down) keeps 0, and the plan says nothing is copied.
void estimate_copies(std::vector<PlannedFile>& plan, const DownloadOptions& options, const std::string& commit,
                     const store::Layout& layout, http::Transport& hub_transport,
                     const http::TransportFactory& make_transport, ProgressSink& progress, std::stop_token stop);

}  // namespace hfget::transfer
