// SPDX-License-Identifier: MIT
// A server or a malicious repo chooses many strings hfget prints: header values, tensor names, index keys,
// error texts. Printed raw, an ESC sequence can set the window title, clear the screen or fake a prompt, a
// newline can fake a line of hfget's own, and a bidi override can make "evil.exe" read as "exe.live".
// Everything such a string can use for that is escaped here, so the rule lives in one place. The escape
// syntax is the one Python's repr and jq users read without thinking: \xNN for bytes, \uNNNN for code points.
#include "util/printable.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>

namespace hfget::util {
namespace {

struct Decoded {
  std::uint32_t code_point;
  std::size_t length;
};

// One UTF-8 sequence at the start of `text`, or nullopt when it is not valid UTF-8 (overlong forms,
// surrogates and values past U+10FFFF included: a terminal may still interpret those).
std::optional<Decoded> decode_utf8(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return Decoded{lead, 1};
  std::size_t length = 0;
  std::uint32_t code_point = 0;
  std::uint32_t minimum = 0;
  if ((lead & 0xe0) == 0xc0) {
    length = 2, code_point = lead & 0x1fu, minimum = 0x80;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3, code_point = lead & 0x0fu, minimum = 0x800;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4, code_point = lead & 0x07u, minimum = 0x10000;
  } else {
    return std::nullopt;
  }
  if (text.size() < length) return std::nullopt;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return std::nullopt;
    code_point = (code_point << 6) | (byte(i) & 0x3fu);
  }
  if (code_point < minimum || code_point > 0x10ffff || (code_point >= 0xd800 && code_point <= 0xdfff)) {
    return std::nullopt;
  }
  return Decoded{code_point, length};
}

// Code points that change how a terminal shows the text around them without being visible themselves.
bool is_invisible_control(std::uint32_t c) {
  return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) || c == 0xad || c == 0x061c || c == 0x180e ||
         (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) || (c >= 0x2060 && c <= 0x206f) || c == 0xfeff ||
         (c >= 0xfff9 && c <= 0xfffb) || (c >= 0xe0000 && c <= 0xe007f);
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  std::size_t position = 0;
  while (position < text.size()) {
    if (position >= max_bytes) {
      out += "...";
      break;
    }
    const std::optional<Decoded> decoded = decode_utf8(text.substr(position));
    if (!decoded) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[position]));
      ++position;
      continue;
    }
    if (is_invisible_control(decoded->code_point)) {
      out += decoded->code_point < 0x80 ? fmt::format("\\x{:02x}", decoded->code_point)
                                        : fmt::format("\\u{:04x}", decoded->code_point);
    } else {
      out.append(text.substr(position, decoded->length));
    }
    position += decoded->length;
  }
  return out;
}

bool has_unprintable(std::string_view text) {
  return printable(text, text.size()) != text;
}

}  // namespace hfget::util
