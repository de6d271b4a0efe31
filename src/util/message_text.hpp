// SPDX-License-Identifier: MIT
// Problems found in untrusted documents quote what they found ("tensor 'x' has no dtype"), and a hostile
// document can make that name 90 MB long: quoted once per shard of a 64-shard repo, the report would hold
// gigabytes of one name. Names are quoted through clip_for_message, which keeps real ones whole.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hfget::util {

/// `text` whole when it has at most `max_bytes` bytes (every real tensor, file or key name), else its first
/// bytes up to a UTF-8 character boundary followed by "…(N bytes)".
std::string clip_for_message(std::string_view text, std::size_t max_bytes = 256);

}  // namespace hfget::util
