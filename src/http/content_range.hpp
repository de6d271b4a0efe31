// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace hfget::http {

/// "bytes 100-199/1000" (RFC 9110 §14.4). An unknown complete length ("/*") is not accepted: we always know
/// the size the listing promised, and compare with it.
struct ContentRange {
  std::uint64_t first;
  std::uint64_t last;
  std::uint64_t complete_length;
};

std::optional<ContentRange> parse_content_range(std::string_view header_value);

/// A 206 is usable only if it continues our partial file exactly (starts at `offset`) and describes the size
/// the listing promised. Anything else restarts the file rather than splicing two different bodies.
bool continues_partial_file(const ContentRange& received, std::uint64_t offset, std::uint64_t expected_size);

}  // namespace hfget::http
