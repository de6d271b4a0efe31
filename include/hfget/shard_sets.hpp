// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "hfget/repo.hpp"

namespace hfget {

/// The shards of one sharded checkpoint, found by name: "<folder>/<stem>-NNNNN-of-MMMMM<extension>", tied to
/// its index file "<stem><extension>.index.json" when the listing has one. The index's content is not
/// fetched: the MMMMM in the names says how many shards the writer produced.
struct ShardSet {
  std::string pattern;               // "model-*-of-00004.safetensors", with its folder; empty: index only
  std::optional<std::string> index;  // "model.safetensors.index.json", with its folder
  unsigned expected = 0;             // MMMMM
  std::size_t in_repo = 0;           // distinct shard numbers of the set in the whole listing
  std::size_t selected = 0;          // of those, kept by --include/--exclude
};

/// The shard sets of `listing`, each with how many of its shards `selected` keeps (what `hfget ls` prints).
/// In name order; then one set with an empty pattern per index file no shard is named after.
std::vector<ShardSet> find_shard_sets(const std::vector<RemoteFile>& listing, const std::vector<RemoteFile>& selected);

}  // namespace hfget
