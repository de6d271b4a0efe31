// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hfget::verify {

/// An index's weight_map (tensor → shard file), compact: the tensor names back to back in one buffer, sorted,
/// 12 bytes of bookkeeping each, and every shard file name stored once (a 64-shard index of 200 K tensors
/// names 64 files 200 K times).
class WeightMap {
 public:
  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }

  /// The i-th tensor in name order, and the file that holds it (relative to the index's folder).
  std::string_view tensor(std::size_t i) const noexcept {
    return std::string_view(names_).substr(entries_[i].name_offset, entries_[i].name_size);
  }
  std::uint32_t shard_id(std::size_t i) const noexcept { return entries_[i].shard; }
  const std::string& shard(std::size_t i) const noexcept { return shards_[entries_[i].shard]; }
  /// Every shard file named, once each; shard_id() indexes it.
  const std::vector<std::string>& shards() const noexcept { return shards_; }

  /// The position of `tensor` in name order, nullopt if the map does not name it.
  std::optional<std::size_t> find(std::string_view tensor) const;
  /// The file the map puts `tensor` in, nullopt if it does not name it.
  std::optional<std::string_view> shard_of(std::string_view tensor) const;

  // For the parser: add() in file order, then finish() once. A tensor named twice keeps its last shard, as
  // a JSON object (and transformers' loader) would. add() returns a problem when the map outgrows its
  // limits: names past 4 GiB (32-bit offsets), or more than kMaxShards distinct files.
  static constexpr std::size_t kMaxShards = 100'000;  // "-of-NNNNN" counts to 99999
  [[nodiscard]] std::optional<std::string> add(std::string_view tensor, std::string_view shard);
  void finish();
  void clear();

 private:
  struct Entry {
    std::uint32_t name_offset;
    std::uint32_t name_size;
    std::uint32_t shard;
  };
  std::string names_;
  std::vector<Entry> entries_;
  std::vector<std::string> shards_;
  std::unordered_map<std::string, std::uint32_t> shard_ids_;
};

/// `model.safetensors.index.json` (or `pytorch_model.bin.index.json`): which shard holds each tensor.
struct ShardIndex {
  std::optional<std::uint64_t> total_size;  // metadata.total_size, when given
  WeightMap weight_map;
};

struct ShardIndexParse {
  std::optional<ShardIndex> index;
  std::string problem;
};

/// Parses an index as SAX events, keeping weight_map and metadata.total_size and nothing else: memory is
/// the weight_map's names plus 12 bytes per tensor, whatever else the document holds; nesting stops at 32.
ShardIndexParse parse_shard_index(std::string_view json_text);

/// Reads and parses the index file at `path`, at most 256 MiB, streamed from disk (never read whole).
ShardIndexParse read_shard_index(const std::filesystem::path& path);

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
