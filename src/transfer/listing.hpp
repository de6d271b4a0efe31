// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hfget/download.hpp"
#include "hfget/repo.hpp"
#include "hub/hub_client.hpp"

namespace hfget::transfer {

/// A revision pinned to its commit. `info` is the revision endpoint's answer when one was asked for (a full
/// commit id needs no request, so whether the repo is gated is then unknown).
struct PinnedRevision {
  std::string commit;
  std::optional<hub::RevisionInfo> info;
};

/// The whole tree at one commit, its paths checked, and what the selection keeps of it.
struct SelectedListing {
  std::vector<RemoteFile> files;
  std::vector<RemoteFile> selected;
};

/// Resolve: the revision to a commit, once, so that a push during the download cannot mix two commits.
PinnedRevision pin_revision(hub::HubClient& hub, const RepoId& repo, const std::string& revision);

/// List, validate, select: the recursive tree once (include/exclude filter the listing, never the network),
/// every path checked before it can touch the disk, then the selection.
SelectedListing list_and_select(hub::HubClient& hub, const RepoId& repo, const std::string& commit,
                                const FileSelection& selection);

}  // namespace hfget::transfer
