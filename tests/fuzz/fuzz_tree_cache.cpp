// SPDX-License-Identifier: MIT
// trees/<commit>.json, a file anyone with access to the cache may have written: read_tree_cache() on the
// input, then for a listing shaped like the Hub's, the round trip serialize → read must give back exactly what
// was read (paths in any Unicode, escaped as Python's json.dump does).

#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "hfget/error.hpp"
#include "store/tree_cache.hpp"

namespace {

bool is_lower_hex(std::string_view text, std::size_t length) {
  return text.size() == length && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// What read_tree_cache() accepts, and serialize_tree_cache() is given: hashes in hex, as the Hub lists them
// (tests/fuzz/crashes/fuzz_tree_cache/ holds the inputs that once broke the round trip).
bool hub_shaped(const hfget::RemoteFile& file) {
  return is_lower_hex(file.blob_id, 40) && (!file.lfs_sha256 || is_lower_hex(*file.lfs_sha256, 64)) &&
         (!file.xet_hash || is_lower_hex(*file.xet_hash, 64));
}

bool same_file(const hfget::RemoteFile& a, const hfget::RemoteFile& b) {
  return a.path == b.path && a.size == b.size && a.blob_id == b.blob_id && a.lfs_sha256 == b.lfs_sha256 &&
         a.lfs_size == b.lfs_size && a.xet_hash == b.xet_hash;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static hfget::fuzz::MemoryFile file("hfget-fuzz-tree-cache");
  try {
    const auto files = hfget::store::read_tree_cache(file.write(hfget::fuzz::as_text(data, size)));
    if (!files) return 0;
    for (const hfget::RemoteFile& entry : *files) {
      HFGET_FUZZ_CHECK(hub_shaped(entry));
    }
    const std::string serialized = hfget::store::serialize_tree_cache(*files);
    for (const char c : serialized) HFGET_FUZZ_CHECK(static_cast<unsigned char>(c) < 0x80);
    const auto again = hfget::store::read_tree_cache(file.write(serialized));
    HFGET_FUZZ_CHECK(again.has_value());
    HFGET_FUZZ_CHECK(again->size() == files->size());
    for (std::size_t i = 0; i < files->size(); ++i) HFGET_FUZZ_CHECK(same_file((*again)[i], (*files)[i]));
  } catch (const hfget::Error&) {
  }
  return 0;
}
