// SPDX-License-Identifier: MIT
// The Hub's tree page (untrusted JSON from the network), then what hfget does next with a listing it
// accepted: the path checks and the tree cache serialization.
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "hfget/error.hpp"
#include "hub/tree_listing.hpp"
#include "store/repo_path.hpp"
#include "store/tree_cache.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(hfget::fuzz::as_text(data, size));
  try {
    std::vector<hfget::RemoteFile> files = hfget::hub::parse_tree_page(text);
    for (const hfget::RemoteFile& file : files) {
      HFGET_FUZZ_CHECK(file.blob_id.size() == 40);
      HFGET_FUZZ_CHECK(!file.lfs_sha256 || (file.lfs_sha256->size() == 64 && file.lfs_size == file.size));
      HFGET_FUZZ_CHECK(!file.xet_hash || file.xet_hash->size() == 64);
    }
    const std::string cache = hfget::store::serialize_tree_cache(files);
    for (const char c : cache) HFGET_FUZZ_CHECK(static_cast<unsigned char>(c) < 0x80);  // ensure_ascii
    hfget::store::validate_listing(files);
  } catch (const hfget::Error&) {
  }
  return 0;
}
