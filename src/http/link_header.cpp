// SPDX-License-Identifier: MIT
#include "http/link_header.hpp"

namespace hfget::http {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool has_rel_next(std::string_view params) {
  // params: `; rel="next"; title="x"`; rel may hold several space-separated relation types.
  while (!params.empty()) {
    const std::size_t semicolon = params.find(';');
    std::string_view param = trim(params.substr(0, semicolon));
    params = semicolon == std::string_view::npos ? std::string_view{} : params.substr(semicolon + 1);
    const std::size_t equals = param.find('=');
    if (equals == std::string_view::npos) continue;
    if (trim(param.substr(0, equals)) != "rel") continue;
    std::string_view value = trim(param.substr(equals + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    while (!value.empty()) {
      const std::size_t space = value.find(' ');
      if (value.substr(0, space) == "next") return true;
      value = space == std::string_view::npos ? std::string_view{} : value.substr(space + 1);
    }
  }
  return false;
}

}  // namespace

std::optional<std::string> next_link(std::string_view header_value) {
  std::string_view rest = header_value;
  while (!rest.empty()) {
    const std::size_t open = rest.find('<');
    if (open == std::string_view::npos) return std::nullopt;
    const std::size_t close = rest.find('>', open);
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view target = rest.substr(open + 1, close - open - 1);
    rest = rest.substr(close + 1);
    // Parameters run until the comma (outside quotes) that separates this link from the next one.
    std::size_t end = 0;
    bool quoted = false;
    while (end < rest.size() && (quoted || rest[end] != ',')) {
      if (rest[end] == '"') quoted = !quoted;
      ++end;
    }
    if (has_rel_next(rest.substr(0, end))) return std::string(target);
    rest = end < rest.size() ? rest.substr(end + 1) : std::string_view{};
  }
  return std::nullopt;
}

}  // namespace hfget::http
