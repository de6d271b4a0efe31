// SPDX-License-Identifier: MIT
#include "cli/command_suggestion.hpp"

#include <algorithm>

namespace hfget::cli {
namespace {

// Optimal string alignment distance: Levenshtein plus the swap of two neighbours, the commonest typo
// ("downlaod"). Inputs are command and flag names, a few dozen bytes: the full table is fine.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> closest_match(std::string_view typed, const std::vector<std::string>& candidates) {
  constexpr std::size_t kLongestCompared = 64;  // a pasted paragraph is not a typo of a flag
  if (typed.empty() || typed.size() > kLongestCompared) return std::nullopt;
  const std::size_t allowed = std::max<std::size_t>(1, typed.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    if (candidate.size() > kLongestCompared) continue;
    const std::size_t distance = edit_distance(typed, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

}  // namespace hfget::cli
