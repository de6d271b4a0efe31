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

/// True when both URLs name the same host (the port may differ): the token goes to the endpoint's host only.
bool same_host(const std::string& a, const std::string& b);

}  // namespace hfget::http
