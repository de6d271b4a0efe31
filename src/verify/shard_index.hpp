// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace hfget::verify {

/// `model.safetensors.index.json` (or `pytorch_model.bin.index.json`): which shard holds each tensor.
struct ShardIndex {
  std::optional<std::uint64_t> total_size;        // metadata.total_size, when given
  std::map<std::string, std::string> weight_map;  // tensor → shard file name, relative to the index's folder
};

struct ShardIndexParse {
  std::optional<ShardIndex> index;
  std::string problem;
};

ShardIndexParse parse_shard_index(std::string_view json_text);

/// "model-00003-of-00064.safetensors" → {stem "model", number 3, count 64, extension ".safetensors"}.
struct ShardName {
  std::string stem;
  unsigned number = 0;
  unsigned count = 0;
  std::string extension;
};
std::optional<ShardName> parse_shard_name(std::string_view file_name);

/// True for "*.safetensors.index.json" and "*.bin.index.json".
bool is_shard_index_name(std::string_view file_name);

}  // namespace hfget::verify
