// SPDX-License-Identifier: MIT
#include "http/url.hpp"

#include <algorithm>
#include <cctype>

#include "http/curl_handles.hpp"

namespace hfget::http {
namespace {

std::optional<std::string> get_part(CURLU* url, CURLUPart part) {
  char* value = nullptr;
  if (curl_url_get(url, part, &value, 0) != CURLUE_OK || value == nullptr) return std::nullopt;
  std::string text(value);
  curl_free(value);
  return text;
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

std::optional<UrlParts> parse_url(const std::string& url) {
  UrlHandle handle(curl_url());
  if (!handle) return std::nullopt;
  if (curl_url_set(handle.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return std::nullopt;
  std::optional<std::string> scheme = get_part(handle.get(), CURLUPART_SCHEME);
  std::optional<std::string> host = get_part(handle.get(), CURLUPART_HOST);
  if (!scheme || !host) return std::nullopt;
  return UrlParts{lowercase(*scheme), lowercase(*host), get_part(handle.get(), CURLUPART_PORT).value_or("")};
}

std::optional<std::string> resolve_reference(const std::string& base, const std::string& relative) {
  UrlHandle handle(curl_url());
  if (!handle) return std::nullopt;
  if (curl_url_set(handle.get(), CURLUPART_URL, base.c_str(), 0) != CURLUE_OK) return std::nullopt;
  if (curl_url_set(handle.get(), CURLUPART_URL, relative.c_str(), 0) != CURLUE_OK) return std::nullopt;
  return get_part(handle.get(), CURLUPART_URL);
}

namespace {

std::string effective_port(const UrlParts& url) {
  if (!url.port.empty()) return url.port;
  return url.scheme == "https" ? "443" : "80";
}

}  // namespace

bool same_origin(const std::string& a, const std::string& b) {
  const std::optional<UrlParts> left = parse_url(a);
  const std::optional<UrlParts> right = parse_url(b);
  return left && right && left->scheme == right->scheme && left->host == right->host &&
         effective_port(*left) == effective_port(*right);
}

std::string origin_of(const std::string& url) {
  const std::optional<UrlParts> parts = parse_url(url);
  if (!parts) return "";
  return parts->scheme + "://" + parts->host + ":" + effective_port(*parts);
}

}  // namespace hfget::http
