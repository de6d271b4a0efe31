// SPDX-License-Identifier: MIT
#include "hfget/shard_sets.hpp"

#include <gtest/gtest.h>

namespace hfget {
namespace {

std::vector<RemoteFile> files(const std::vector<std::string>& paths) {
  std::vector<RemoteFile> listing;
  for (const std::string& path : paths)
    listing.push_back(RemoteFile{path, 1, "oid", std::nullopt, std::nullopt, std::nullopt});
  return listing;
}

TEST(ShardSets, GroupsShardsByNameAndTiesTheirIndex) {
  const std::vector<RemoteFile> listing =
      files({"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors", "model-00003-of-00003.safetensors",
             "model.safetensors.index.json", "config.json"});
  const std::vector<ShardSet> sets = find_shard_sets(listing, files({"model-00001-of-00003.safetensors"}));
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].pattern, "model-*-of-00003.safetensors");
  EXPECT_EQ(sets[0].index, "model.safetensors.index.json");
  EXPECT_EQ(sets[0].expected, 3u);
  EXPECT_EQ(sets[0].in_repo, 3u);
  EXPECT_EQ(sets[0].selected, 1u);
}

TEST(ShardSets, KeepsFoldersAndFormatsApartAndSeesAMissingShard) {
  const std::vector<RemoteFile> listing =
      files({"pytorch_model-00001-of-00002.bin", "pytorch_model.bin.index.json", "sub/model-00001-of-00002.safetensors",
             "sub/model-00002-of-00002.safetensors", "sub/model.safetensors.index.json"});
  const std::vector<ShardSet> sets = find_shard_sets(listing, listing);
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0].pattern, "pytorch_model-*-of-00002.bin");
  EXPECT_EQ(sets[0].index, "pytorch_model.bin.index.json");
  EXPECT_EQ(sets[0].in_repo, 1u);
  EXPECT_EQ(sets[1].pattern, "sub/model-*-of-00002.safetensors");
  EXPECT_EQ(sets[1].index, "sub/model.safetensors.index.json");
  EXPECT_EQ(sets[1].in_repo, 2u);
}

TEST(ShardSets, ReportsAnIndexNoShardIsNamedAfter) {
  const std::vector<ShardSet> sets =
      find_shard_sets(files({"model.safetensors.index.json", "weights-a.safetensors"}), {});
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].pattern, "");
  EXPECT_EQ(sets[0].index, "model.safetensors.index.json");
}

}  // namespace
}  // namespace hfget
