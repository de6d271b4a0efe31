// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hfget::cli {

/// The candidate nearest to `typed` by edit distance (insertions, deletions, substitutions and swaps of
/// two neighbours), if it is near enough to be a typo: at most one edit per three characters, and at least
/// one. For "did you mean ...?" after an unknown command or flag.
std::optional<std::string> closest_match(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace hfget::cli
