// SPDX-License-Identifier: MIT
// The Xet read token: what lets hfget ask the CAS how a Xet file is made up. The Hub hands it out per repo and
// revision at {endpoint}/api/{type}s/{repo}/xet-read-token/{revision}, in the JSON body ({accessToken, exp,
// casUrl}, as huggingface.js reads it) and in X-Xet-* headers (as huggingface_hub reads it); it is short-lived
// (minutes), so it is refreshed before it expires and when the CAS rejects it. It goes to the CAS only, as the
// Hub token goes to the Hub only: the two never meet, and neither reaches a presigned xorb URL.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "hfget/repo.hpp"
#include "hfget/secret.hpp"
#include "http/transport.hpp"

namespace hfget::hub {

struct XetAccess {
  std::string cas_url;  // "https://cas-server.xethub.hf.co", no trailing '/'
  Secret token;
  std::chrono::system_clock::time_point expires;
};

std::string xet_read_token_url(const std::string& endpoint, const RepoId& repo, const std::string& revision);

/// The token endpoint's answer, from its JSON body or, where that lacks a field, its X-Xet-Access-Token,
/// X-Xet-Token-Expiration and X-Xet-Cas-Url headers. Throws Error{kNetwork} naming what is missing or wrong: no
/// token, a token that is not printable ASCII or is over 16 KiB, a CAS URL that is not http(s), no expiry.
XetAccess parse_xet_access(const http::HttpResponse& response, std::string_view body);

/// The download's current token, shared by its connections. Thread-safe: one connection refreshes while the
/// others wait for the new token rather than each asking the Hub.
class XetTokens {
 public:
  using Fetch = std::function<XetAccess()>;
  using Clock = std::function<std::chrono::system_clock::time_point()>;

  /// `fetch` asks the Hub (and throws Error when it cannot); `margin` before the expiry counts as expired.
  explicit XetTokens(
      Fetch fetch, std::chrono::seconds margin = std::chrono::seconds(60),
      Clock clock = [] { return std::chrono::system_clock::now(); });

  /// The token and its CAS, fetched on first use and again once it is within `margin` of its expiry (or past
  /// half its lifetime, when that comes later).
  std::shared_ptr<const XetAccess> current();
  /// The CAS answered 401 to `rejected`: the next current() fetches a new one (unless another connection
  /// already did).
  void rejected(const std::shared_ptr<const XetAccess>& rejected);

 private:
  Fetch fetch_;
  std::chrono::seconds margin_;
  Clock clock_;
  std::mutex mutex_;
  std::shared_ptr<const XetAccess> access_;
  std::chrono::system_clock::time_point refresh_at_;
};

}  // namespace hfget::hub
