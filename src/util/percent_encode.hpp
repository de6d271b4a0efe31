// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hfget::util {

/// Python's urllib.parse.quote: keeps A-Z a-z 0-9 and `_.-~`, plus the characters in `safe`; every other byte
/// becomes %XX with uppercase hex. The Hub client quotes file paths with safe="/" and revisions with safe="".
std::string percent_encode(std::string_view text, std::string_view safe);

/// The inverse: every %XX becomes its byte; nullopt for a '%' not followed by two hex digits, or a %00
/// (a NUL has no place in a revision or a path).
std::optional<std::string> percent_decode(std::string_view text);

}  // namespace hfget::util
