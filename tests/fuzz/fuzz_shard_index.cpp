// SPDX-License-Identifier: MIT
// model.safetensors.index.json (untrusted: a downloaded file) and the shard file names it refers to. The
// index is parsed from memory and, through a memfd, streamed from a file; both parses must agree, and an
// accepted weight_map must be sorted, free of duplicates and able to find each of its tensors.

#include <string>

#include "fuzz_check.hpp"
#include "hfget/error.hpp"
#include "verify/shard_index.hpp"

namespace {

void check_name(std::string_view name) {
  const auto parsed = hfget::verify::parse_shard_name(name);
  (void)hfget::verify::is_shard_index_name(name);
  if (!parsed) return;
  HFGET_FUZZ_CHECK(parsed->count > 0);
  HFGET_FUZZ_CHECK(parsed->stem.size() + parsed->extension.size() < name.size());
  HFGET_FUZZ_CHECK(name.substr(0, parsed->stem.size()) == parsed->stem);
  HFGET_FUZZ_CHECK(name.substr(name.size() - parsed->extension.size()) == parsed->extension);
}

void check_weight_map(const hfget::verify::WeightMap& map) {
  for (std::size_t i = 0; i < map.size(); ++i) {
    if (i > 0) HFGET_FUZZ_CHECK(map.tensor(i - 1) < map.tensor(i));
    HFGET_FUZZ_CHECK(map.shard_id(i) < map.shards().size());
    HFGET_FUZZ_CHECK(map.find(map.tensor(i)) == i);
    HFGET_FUZZ_CHECK(map.shard_of(map.tensor(i)) == std::string_view(map.shard(i)));
  }
  for (const std::string& shard : map.shards()) check_name(shard);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static hfget::fuzz::MemoryFile file("hfget-fuzz-shard-index");
  const std::string_view text = hfget::fuzz::as_text(data, size);
  try {
    const hfget::verify::ShardIndexParse result = hfget::verify::parse_shard_index(text);
    HFGET_FUZZ_CHECK(result.index.has_value() != !result.problem.empty());
    if (result.index) check_weight_map(result.index->weight_map);
    const hfget::verify::ShardIndexParse streamed = hfget::verify::read_shard_index(file.write(text));
    HFGET_FUZZ_CHECK(streamed.problem == result.problem);
    if (streamed.index) {
      HFGET_FUZZ_CHECK(streamed.index->total_size == result.index->total_size);
      HFGET_FUZZ_CHECK(streamed.index->weight_map.size() == result.index->weight_map.size());
    }
    check_name(text);
  } catch (const hfget::Error&) {
  }
  return 0;
}
