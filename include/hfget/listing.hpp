// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "hfget/download.hpp"
#include "hfget/hub_connection.hpp"
#include "hfget/repo.hpp"
#include "hfget/shard_sets.hpp"

namespace hfget {

/// What `list_repo` needs: the repo, the revision and the selection as for a download, and how to reach the
/// Hub (or, offline, which cache holds the listing a download recorded).
struct ListOptions {
  RepoId repo;
  std::string revision = "main";
  FileSelection selection;
  std::filesystem::path cache_dir;  // read only when offline
  bool offline = false;             // HF_HUB_OFFLINE: the cache's record, never a request
  HubConnection hub;                // unless offline
};

/// A repo's files at one commit, as `download` with the same revision and selection would see them.
struct RepoListing {
  std::string commit;
  std::vector<RemoteFile> files;     // the whole tree at `commit`, every path checked as for a download
  std::vector<RemoteFile> selected;  // kept by the selection, in listing order
  std::vector<ShardSet> shard_sets;  // of the whole listing, with how many shards the selection keeps
  bool offline = false;              // read from the cache's record, not from the Hub
};

/// `download`'s first steps and nothing after them: the revision pinned to a commit (no request for a full
/// commit id), the recursive tree at that commit, every path checked, the selection applied. Offline, the
/// commit refs/<revision> names and the listing trees/<commit>.json holds, as a download recorded them; what
/// was never recorded is Error{kNetwork} at once. Writes nothing. Throws Error as `download` does.
RepoListing list_repo(const ListOptions& options, std::stop_token stop);

}  // namespace hfget
