// SPDX-License-Identifier: MIT
#include "hub/xet_token.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>

#include "hfget/error.hpp"
#include "http/url.hpp"
#include "util/percent_encode.hpp"

namespace hfget::hub {
namespace {

constexpr std::size_t kMaxTokenBytes = 16 * 1024;

Error bad_answer(const std::string& what) {
  return Error(ErrorCode::kNetwork, "the Hub's Xet read token answer is unusable: " + what);
}

std::optional<std::string> string_field(const nlohmann::json& body, const char* name) {
  if (!body.is_object() || !body.contains(name) || !body[name].is_string()) return std::nullopt;
  return body[name].get<std::string>();
}

std::optional<std::int64_t> expiry_field(const nlohmann::json& body, const http::HttpResponse& response) {
  if (body.is_object() && body.contains("exp") && body["exp"].is_number_integer())
    return body["exp"].get<std::int64_t>();
  const std::string* header = response.header("x-xet-token-expiration");
  if (header == nullptr) return std::nullopt;
  std::int64_t seconds = 0;
  const auto [end, error] = std::from_chars(header->data(), header->data() + header->size(), seconds);
  if (error != std::errc() || end != header->data() + header->size()) return std::nullopt;
  return seconds;
}

bool printable_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

}  // namespace

std::string xet_read_token_url(const std::string& endpoint, const RepoId& repo, const std::string& revision) {
  return endpoint + "/api/" + std::string(to_string(repo.type)) + "s/" + repo.name + "/xet-read-token/" +
         util::percent_encode(revision, "");
}

XetAccess parse_xet_access(const http::HttpResponse& response, std::string_view body_text) {
  // An unparsable body still leaves the headers, which huggingface_hub reads alone.
  const nlohmann::json body = nlohmann::json::parse(body_text, nullptr, false);
  const auto from_header = [&](const char* name) -> std::optional<std::string> {
    const std::string* value = response.header(name);
    return value ? std::optional(*value) : std::nullopt;
  };
  std::optional<std::string> token = string_field(body, "accessToken");
  if (!token) token = from_header("x-xet-access-token");
  std::optional<std::string> cas_url = string_field(body, "casUrl");
  if (!cas_url) cas_url = from_header("x-xet-cas-url");
  const std::optional<std::int64_t> expires = expiry_field(body, response);

  if (!token || token->empty()) throw bad_answer("no accessToken");
  if (token->size() > kMaxTokenBytes || !printable_ascii(*token)) throw bad_answer("the token is not a printable word");
  XetAccess access;
  access.token = Secret(std::move(*token));  // registered for redaction before anything can print it
  if (!cas_url) throw bad_answer("no casUrl");
  while (!cas_url->empty() && cas_url->back() == '/') cas_url->pop_back();
  const std::optional<http::UrlParts> parsed = http::parse_url(*cas_url);
  if (!parsed || (parsed->scheme != "https" && parsed->scheme != "http") || !printable_ascii(*cas_url)) {
    throw bad_answer("casUrl is not an http(s) URL");
  }
  access.cas_url = std::move(*cas_url);
  if (!expires || *expires <= 0) throw bad_answer("no expiry (exp)");
  // Past 2100 is "no expiry" from a careless server; clamped, the conversion to the clock cannot overflow.
  constexpr std::int64_t kYear2100 = 4'102'444'800;
  access.expires = std::chrono::system_clock::time_point(std::chrono::seconds(std::min(*expires, kYear2100)));
  return access;
}

XetTokens::XetTokens(Fetch fetch, std::chrono::seconds margin, Clock clock)
    : fetch_(std::move(fetch)), margin_(margin), clock_(std::move(clock)) {}

std::shared_ptr<const XetAccess> XetTokens::current() {
  const std::lock_guard lock(mutex_);
  const auto now = clock_();
  // Renewed `margin` before it expires, or half-way through its life when that is shorter than the margin
  // (a token of 60 s, or a clock ahead of the Hub's, would otherwise look expired on arrival, every time).
  if (!access_ || now >= refresh_at_) {
    access_ = std::make_shared<const XetAccess>(fetch_());
    const auto lifetime = access_->expires - now;
    refresh_at_ = access_->expires - std::min<std::chrono::system_clock::duration>(margin_, lifetime / 2);
  }
  return access_;
}

void XetTokens::rejected(const std::shared_ptr<const XetAccess>& rejected) {
  const std::lock_guard lock(mutex_);
  if (access_ == rejected) access_.reset();
}

}  // namespace hfget::hub
