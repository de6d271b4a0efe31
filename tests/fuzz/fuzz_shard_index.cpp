// SPDX-License-Identifier: MIT
// model.safetensors.index.json (untrusted: a downloaded file) and the shard file names it refers to.
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = hfget::fuzz::as_text(data, size);
  try {
    const hfget::verify::ShardIndexParse result = hfget::verify::parse_shard_index(text);
    HFGET_FUZZ_CHECK(result.index.has_value() != !result.problem.empty());
    if (result.index) {
      for (const auto& [tensor, shard] : result.index->weight_map) check_name(shard);
    }
    check_name(text);
  } catch (const hfget::Error&) {
  }
  return 0;
}
