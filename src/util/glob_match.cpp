// SPDX-License-Identifier: MIT
// fnmatch semantics by iterative backtracking over the last `*`: linear in practice, and with no recursion a
// hostile pattern cannot blow the stack.
#include "util/glob_match.hpp"

#include <cstddef>
#include <optional>

namespace hfget::util {
namespace {

struct SetMatch {
  bool matched;
  std::size_t next_pattern_index;  // just past the closing ']'
};

// Matches `c` against the bracket expression starting at pattern[open] == '['. nullopt when the bracket is not
// closed, in which case fnmatch treats '[' as a literal character.
std::optional<SetMatch> match_set(std::string_view pattern, std::size_t open, char c) noexcept {
  std::size_t i = open + 1;
  bool negate = false;
  if (i < pattern.size() && pattern[i] == '!') {
    negate = true;
    ++i;
  }
  const std::size_t first = i;
  bool matched = false;
  while (i < pattern.size() && (pattern[i] != ']' || i == first)) {
    const char low = pattern[i];
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      const char high = pattern[i + 2];
      if (low <= c && c <= high) matched = true;
      i += 3;
    } else {
      if (low == c) matched = true;
      ++i;
    }
  }
  if (i >= pattern.size()) return std::nullopt;
  return SetMatch{matched != negate, i + 1};
}

}  // namespace

bool fnmatch_case(std::string_view pattern, std::string_view text) noexcept {
  std::size_t p = 0;
  std::size_t t = 0;
  std::optional<std::size_t> star_pattern;  // index just past the last '*'
  std::size_t star_text = 0;                // where that '*' currently stops matching
  while (t < text.size()) {
    if (p < pattern.size()) {
      const char pc = pattern[p];
      if (pc == '*') {
        star_pattern = ++p;
        star_text = t;
        continue;
      }
      if (pc == '?') {
        ++p;
        ++t;
        continue;
      }
      if (pc == '[') {
        if (std::optional<SetMatch> set = match_set(pattern, p, text[t])) {
          if (set->matched) {
            p = set->next_pattern_index;
            ++t;
            continue;
          }
        } else if (text[t] == '[') {
          ++p;
          ++t;
          continue;
        }
      } else if (pc == text[t]) {
        ++p;
        ++t;
        continue;
      }
    }
    if (!star_pattern) return false;
    p = *star_pattern;
    t = ++star_text;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace hfget::util
