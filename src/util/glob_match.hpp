// SPDX-License-Identifier: MIT
#pragma once

#include <string_view>

namespace hfget::util {

/// Python's fnmatch.fnmatchcase: case-sensitive and anchored; `*` matches any run of characters including
/// `/`, `?` one character, `[abc]`, `[a-z]` and `[!abc]` a set; an unclosed `[` is a literal. The Hub client
/// filters repo files with exactly these rules, so `*.json` also matches `a/b/c.json`.
bool fnmatch_case(std::string_view pattern, std::string_view text) noexcept;

}  // namespace hfget::util
