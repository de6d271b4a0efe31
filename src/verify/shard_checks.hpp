// SPDX-License-Identifier: MIT
#pragma once

#include <map>
#include <string>

#include "hfget/verify.hpp"
#include "verify/inventory.hpp"
#include "verify/safetensors_header.hpp"

namespace hfget::verify {

/// Headers of every present *.safetensors file, read once, keyed by repo path.
using HeaderTable = std::map<std::string, HeaderCheck>;
HeaderTable read_all_headers(const std::filesystem::path& root, const Inventory& inventory);

/// shard_set: for each *.safetensors.index.json / *.bin.index.json, every shard its weight_map names is
/// present, the count matches the "-of-NNNNN" of the names, no stray shard of the same pattern lies beside
/// them, and metadata.total_size equals the tensor bytes of the shards.
CheckResult check_shard_sets(const std::filesystem::path& root, const Inventory& inventory, const HeaderTable& headers,
                             VerifyReport& report);

/// safetensors_headers: every header is well formed, and agrees with the index: every tensor the index maps
/// to a shard is in that shard's header, and no tensor of a shard is missing from the index.
CheckResult check_safetensors_headers(const std::filesystem::path& root, const Inventory& inventory,
                                      const HeaderTable& headers, VerifyReport& report);

}  // namespace hfget::verify
