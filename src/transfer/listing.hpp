// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hfget/download.hpp"
#include "hfget/repo.hpp"
#include "hub/hub_client.hpp"

namespace hfget::transfer {

/// The whole tree at one commit, its paths checked, and what the selection keeps of it.
struct SelectedListing {
  std::vector<RemoteFile> files;
  std::vector<RemoteFile> selected;
};

/// Resolve: the revision to a commit, once, so that a push during the download cannot mix two commits. A full
/// commit id is asked for too, as snapshot_download does: the one request proves the repo and the commit
/// exist and the token sees them, and says whether the repo is gated (so that a pinned deploy gets the
/// one-line gated error, not one per file).
hub::RevisionInfo pin_revision(hub::HubClient& hub, const RepoId& repo, const std::string& revision);

/// List, validate, select: the recursive tree once (include/exclude filter the listing, never the network),
/// every path checked before it can touch the disk, then the selection.
SelectedListing list_and_select(hub::HubClient& hub, const RepoId& repo, const std::string& commit,
                                const FileSelection& selection);

}  // namespace hfget::transfer
