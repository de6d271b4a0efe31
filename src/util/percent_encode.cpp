// SPDX-License-Identifier: MIT
#include "util/percent_encode.hpp"

namespace hfget::util {

std::string percent_encode(std::string_view text, std::string_view safe) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    const bool unreserved = (byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') ||
                            (byte >= '0' && byte <= '9') || ch == '_' || ch == '.' || ch == '-' || ch == '~';
    if (unreserved || safe.find(ch) != std::string_view::npos) {
      out += ch;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0x0F];
    }
  }
  return out;
}

}  // namespace hfget::util
