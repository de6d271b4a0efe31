// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hfget::http {

struct UrlParts {
  std::string scheme;  // lowercase
  std::string host;    // lowercase, without port
  std::string port;    // empty when default
};

/// nullopt for anything libcurl's URL parser rejects.
std::optional<UrlParts> parse_url(const std::string& url);

/// `relative` resolved against `base` (RFC 3986), e.g. a relative Location header. nullopt if invalid.
std::optional<std::string> resolve_reference(const std::string& base, const std::string& relative);

/// True when both URLs have the same scheme, host and port: the token goes to the endpoint's origin only,
/// so neither another port of the same machine nor plain http after https ever receives it.
bool same_origin(const std::string& a, const std::string& b);

/// "scheme://host:port" with the port always spelled out, so equal origins compare equal as strings.
/// Empty for an invalid URL.
std::string origin_of(const std::string& url);

}  // namespace hfget::http
