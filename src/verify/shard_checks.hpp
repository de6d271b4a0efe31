// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hfget/verify.hpp"
#include "verify/inventory.hpp"

namespace hfget::verify {

/// What the checks need of one safetensors header, once its tensors were checked and dropped.
struct HeaderSummary {
  std::string problem;  // empty: the header is well formed
  std::uint64_t tensor_bytes = 0;
  std::size_t tensors = 0;

  bool ok() const noexcept { return problem.empty(); }
};

/// What the checks need of one shard index, once its weight_map was checked against its shards' headers.
struct IndexSummary {
  std::string path;     // repo path of the index file
  std::string problem;  // why it does not parse; empty when it does
  std::optional<std::uint64_t> total_size;
  std::set<std::string> shards;                // repo paths of the files its weight_map names
  std::vector<FileProblem> header_mismatches;  // tensors the index and a shard's header disagree on
};

/// The snapshot's weights as the shard_set and safetensors_headers checks see them: every present index
/// and every *.safetensors header on disk, each read once, the headers one at a time.
struct WeightsScan {
  std::map<std::string, HeaderSummary> headers;  // by repo path
  std::vector<IndexSummary> indexes;             // in inventory order
};
WeightsScan scan_weights(const std::filesystem::path& root, const Inventory& inventory);

/// shard_set: for each *.safetensors.index.json / *.bin.index.json, every shard its weight_map names is
/// present, the count matches the "-of-NNNNN" of the names, no stray shard of the same pattern lies beside
/// them, and metadata.total_size equals the tensor bytes of the shards.
CheckResult check_shard_sets(const Inventory& inventory, const WeightsScan& scan, VerifyReport& report);

/// safetensors_headers: every header is well formed, and agrees with the index: every tensor the index maps
/// to a shard is in that shard's header, and no tensor of a shard is missing from the index.
CheckResult check_safetensors_headers(const WeightsScan& scan, VerifyReport& report);

}  // namespace hfget::verify
