// SPDX-License-Identifier: MIT
#pragma once

#include "hfget/download.hpp"

namespace hfget::transfer {

/// HF_HUB_OFFLINE: no request at all. Succeeds when an earlier download recorded the commit and listing and
/// every selected file is complete on disk, as the Python client's offline snapshot does; throws
/// Error{kNetwork} naming what is missing otherwise.
DownloadReport offline_snapshot(const DownloadOptions& options);

}  // namespace hfget::transfer
