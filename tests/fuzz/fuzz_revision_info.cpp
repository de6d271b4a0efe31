// SPDX-License-Identifier: MIT
// The Hub's revision info (untrusted JSON from the network, up to 64 MiB): only its top-level "sha" is used.
// Accepted: a 40-hex commit; refused: Error{kNetwork}, whatever the body's size or nesting.
#include <string>

#include "fuzz_check.hpp"
#include "hfget/error.hpp"
#include "hub/tree_listing.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(hfget::fuzz::as_text(data, size));
  try {
    const std::string commit = hfget::hub::parse_commit_from_revision_info(text);
    HFGET_FUZZ_CHECK(commit.size() == 40);
    HFGET_FUZZ_CHECK(commit.find_first_not_of("0123456789abcdef") == std::string::npos);
    HFGET_FUZZ_CHECK(text.find(commit) != std::string::npos);  // "sha" is never escaped in hex
  } catch (const hfget::Error& error) {
    HFGET_FUZZ_CHECK(error.code() == hfget::ErrorCode::kNetwork);
  }
  return 0;
}
