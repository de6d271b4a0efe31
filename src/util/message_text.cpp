// SPDX-License-Identifier: MIT
#include "util/message_text.hpp"

#include <fmt/format.h>

namespace hfget::util {

std::string clip_for_message(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t cut = max_bytes;
  // Back up over continuation bytes (10xxxxxx) so that no character is cut in half.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;
  return fmt::format("{}…({} bytes)", text.substr(0, cut), text.size());
}

}  // namespace hfget::util
