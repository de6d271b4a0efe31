// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "verify/snapshot_checks.hpp"

namespace hfget::verify {

/// One file the snapshot should hold, and what is on disk for it.
struct ExpectedFile {
  std::string path;
  std::optional<RemoteFile> remote;  // the listing's entry; nullopt when no listing was recorded
  bool present = false;              // a regular file (through the cache symlink) exists
  std::uint64_t size_on_disk = 0;
  std::string link_problem;  // cache: the snapshot link names another blob, or dangles
};

/// The snapshot's files as the checks see them, gathered once.
struct Inventory {
  std::vector<ExpectedFile> expected;  // what the download selected (or everything, without a record)
  std::set<std::string> upstream;      // every path of the commit (or of the disk, without a listing)
  std::set<std::string> selected;      // the paths the download selected
  std::set<std::string> on_disk;       // every regular file under the root (metadata folders excluded)
  bool has_listing = false;

  bool is_present(const std::string& path) const { return on_disk.count(path) != 0; }
  bool is_excluded(const std::string& path) const { return upstream.count(path) != 0 && selected.count(path) == 0; }
};

Inventory take_inventory(const SnapshotOnDisk& snapshot);

}  // namespace hfget::verify
