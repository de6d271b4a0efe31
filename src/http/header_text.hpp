// SPDX-License-Identifier: MIT
// A header value the server chose (Content-Range, ETag, Content-Encoding, Location) can hold anything: an
// escape sequence that repaints the terminal, a newline that forges a second log line, a bidi override that
// shows the text reversed, invalid UTF-8, a megabyte. Every such value that reaches a message goes through
// header_text() first.
//
// This is a stand-in for util::printable (being added on main, with the same rules and the same default
// length): when it lands, replace `http::header_text(` with `util::printable(` and delete this file. It is
// header-only so that the stand-in touches no build list.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hfget::http {

namespace header_text_detail {

// The length of the UTF-8 sequence at text[0] and its code point, or 0 when it is not valid UTF-8
// (overlong forms, surrogates and code points past U+10FFFF included).
inline std::size_t utf8_sequence(std::string_view text, char32_t& code_point) {
  const auto lead = static_cast<unsigned char>(text[0]);
  std::size_t length = 0;
  char32_t minimum = 0;
  if (lead < 0x80) {
    code_point = lead;
    return 1;
  }
  if ((lead & 0xE0) == 0xC0) {
    length = 2, minimum = 0x80, code_point = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, minimum = 0x800, code_point = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, minimum = 0x10000, code_point = lead & 0x07;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    const auto next = static_cast<unsigned char>(text[i]);
    if ((next & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (next & 0x3F);
  }
  if (code_point < minimum || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) return 0;
  return length;
}

// C1 controls, and the invisible or direction-changing code points that make text read other than it is.
inline bool is_hidden(char32_t code_point) {
  return (code_point >= 0x80 && code_point <= 0x9F) || (code_point >= 0x200B && code_point <= 0x200F) ||
         (code_point >= 0x202A && code_point <= 0x202E) || (code_point >= 0x2060 && code_point <= 0x2069) ||
         code_point == 0xFEFF;
}

}  // namespace header_text_detail

/// `value` made safe for one line of a terminal or a log: C0 controls, DEL, C1 controls and invisible or
/// bidi code points become \xNN or \uNNNN, every byte that is not valid UTF-8 becomes \xNN; the rest is
/// kept. Longer than `max_bytes`, it is cut at a character boundary and ends with "...".
inline std::string header_text(std::string_view value, std::size_t max_bytes = 200) {
  std::string out;
  for (std::size_t at = 0; at < value.size();) {
    if (out.size() >= max_bytes) {
      out += "...";
      break;
    }
    char32_t code_point = 0;
    const std::size_t length = header_text_detail::utf8_sequence(value.substr(at), code_point);
    if (length == 0 || code_point < 0x20 || code_point == 0x7F) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(value[at]));
      at += 1;
    } else if (header_text_detail::is_hidden(code_point)) {
      out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(code_point));
      at += length;
    } else {
      out.append(value.substr(at, length));
      at += length;
    }
  }
  return out;
}

}  // namespace hfget::http
