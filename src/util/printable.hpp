// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hfget::util {

/// Text that came from a server or a repo (a header value, a tensor name, a JSON key), made safe to put in
/// one line of a terminal or a log: every C0 control (newline included), DEL and C1 control, every invisible
/// formatting or bidi code point (U+200B-U+200F, U+202A-U+202E, U+2066-U+2069, ...) and every byte that is
/// not valid UTF-8 is written as an escape (\x1b, \u202e); everything else is kept. Inputs longer than
/// `max_bytes` are cut (at a character boundary) and end with "...".
std::string printable(std::string_view text, std::size_t max_bytes = 200);

/// Whether printable() would change `text` (ignoring its length): a name that needs escaping to be shown.
bool has_unprintable(std::string_view text);

}  // namespace hfget::util
