// SPDX-License-Identifier: MIT
#include "http/content_range.hpp"

#include <charconv>

namespace hfget::http {
namespace {

std::optional<std::uint64_t> parse_number(std::string_view text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<ContentRange> parse_content_range(std::string_view value) {
  constexpr std::string_view kUnit = "bytes ";
  if (value.substr(0, kUnit.size()) != kUnit) return std::nullopt;
  value.remove_prefix(kUnit.size());
  const std::size_t dash = value.find('-');
  const std::size_t slash = value.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return std::nullopt;
  const std::optional<std::uint64_t> first = parse_number(value.substr(0, dash));
  const std::optional<std::uint64_t> last = parse_number(value.substr(dash + 1, slash - dash - 1));
  const std::optional<std::uint64_t> complete = parse_number(value.substr(slash + 1));
  if (!first || !last || !complete || *first > *last || *last >= *complete) return std::nullopt;
  return ContentRange{*first, *last, *complete};
}

bool continues_partial_file(const ContentRange& received, std::uint64_t offset, std::uint64_t expected_size) {
  return received.first == offset && received.complete_length == expected_size && received.last < expected_size;
}

}  // namespace hfget::http
