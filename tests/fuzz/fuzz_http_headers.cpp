// SPDX-License-Identifier: MIT
// Response header values from the Hub or a CDN: Content-Range (resumed downloads) and Link (tree pagination).
#include <optional>
#include <string>

#include "fuzz_check.hpp"
#include "hfget/error.hpp"
#include "http/content_range.hpp"
#include "http/link_header.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = hfget::fuzz::as_text(data, size);
  try {
    if (const auto range = hfget::http::parse_content_range(text)) {
      HFGET_FUZZ_CHECK(range->first <= range->last && range->last < range->complete_length);
      HFGET_FUZZ_CHECK(hfget::http::continues_partial_file(*range, range->first, range->complete_length));
    }
    if (const std::optional<std::string> next = hfget::http::next_link(text)) {
      HFGET_FUZZ_CHECK(next->find('>') == std::string::npos);
      HFGET_FUZZ_CHECK(text.find("<" + *next + ">") != std::string_view::npos);
    }
  } catch (const hfget::Error&) {
  }
  return 0;
}
