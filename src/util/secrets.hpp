// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>

namespace hfget::util {

/// Remembers a credential (the Hub token, later a Xet token) for redact_secrets(). Values shorter than 8
/// bytes are ignored: redacting them would mangle ordinary words. Thread-safe.
void register_secret(std::string_view secret);

/// `text` with every registered secret replaced by "***". Applied to every message hfget prints or logs: a
/// hostile server can echo the token back (in an error text, in a redirect's query string), and hfget must
/// not be the one that shows it. Thread-safe.
std::string redact_secrets(std::string text);

}  // namespace hfget::util
