// SPDX-License-Identifier: MIT
// `hfget ls` reports each sharded checkpoint as "4/4 shards": shards are grouped by folder, stem, shard count
// and extension, as transformers names them (model-00001-of-00004.safetensors), and an index file belongs to
// the group whose "<stem><extension>" it is named after (model.safetensors.index.json).
#include "hfget/shard_sets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "verify/shard_index.hpp"

namespace hfget {
namespace {

struct SetKey {
  std::string folder;  // "" or "sub/dir/"
  std::string stem;
  unsigned count = 0;
  std::string extension;
  auto operator<=>(const SetKey&) const = default;
};

std::pair<std::string, std::string> split_folder(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {path.substr(0, slash + 1), path.substr(slash + 1)};
}

std::optional<std::pair<SetKey, unsigned>> shard_of(const std::string& path) {
  const auto [folder, name] = split_folder(path);
  const std::optional<verify::ShardName> shard = verify::parse_shard_name(name);
  if (!shard || verify::is_shard_index_name(name)) return std::nullopt;
  return std::pair(SetKey{folder, shard->stem, shard->count, shard->extension}, shard->number);
}

}  // namespace

std::vector<ShardSet> find_shard_sets(const std::vector<RemoteFile>& listing, const std::vector<RemoteFile>& selected) {
  std::map<SetKey, std::set<unsigned>> in_repo;
  std::map<SetKey, std::set<unsigned>> kept;
  std::vector<std::string> indexes;
  for (const RemoteFile& file : listing) {
    if (const auto shard = shard_of(file.path)) in_repo[shard->first].insert(shard->second);
    if (verify::is_shard_index_name(split_folder(file.path).second)) indexes.push_back(file.path);
  }
  for (const RemoteFile& file : selected) {
    if (const auto shard = shard_of(file.path)) kept[shard->first].insert(shard->second);
  }
  std::vector<ShardSet> sets;
  std::set<std::string> claimed_indexes;
  for (const auto& [key, numbers] : in_repo) {
    ShardSet set;
    set.pattern = fmt::format("{}{}-*-of-{:05d}{}", key.folder, key.stem, key.count, key.extension);
    set.expected = key.count;
    set.in_repo = numbers.size();
    set.selected = kept.count(key) != 0 ? kept.at(key).size() : 0;
    const std::string index = key.folder + key.stem + key.extension + ".index.json";
    if (std::find(indexes.begin(), indexes.end(), index) != indexes.end()) {
      set.index = index;
      claimed_indexes.insert(index);
    }
    sets.push_back(std::move(set));
  }
  for (const std::string& index : indexes) {
    if (claimed_indexes.count(index) == 0) sets.push_back(ShardSet{"", index, 0, 0, 0});
  }
  return sets;
}

}  // namespace hfget
