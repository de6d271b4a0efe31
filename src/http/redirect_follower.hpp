// SPDX-License-Identifier: MIT
// The one place that decides what a redirect may do: how many are followed, which schemes a target may
// have, and which host sees the bearer token (the endpoint's origin alone: scheme, host and port). The Hub
// client's JSON requests and the bridge source's ranged GETs both follow redirects through it, so the token
// rule cannot drift between them; each caller words its own errors and says, through a HopObserver, what
// it adds to each request (the bridge: an If-Range per origin) and what it makes of each redirect (the
// bridge: a redirect to another host is the file's signed CDN URL, shared with its other connections).
#pragma once

#include <stop_token>
#include <string>

#include "hfget/secret.hpp"
#include "http/transport.hpp"

namespace hfget::http {

/// What a caller of RedirectFollower::get is told about each hop. Every call may throw (hfget::Error): the
/// chain ends with it.
class HopObserver {
 public:
  virtual ~HopObserver() = default;
  /// Before each request (`spec` has the URL and, to the endpoint's origin, the token): add headers.
  virtual void before_request(RequestSpec& /*spec*/, bool /*to_the_endpoint*/) {}
  /// After each answer, a redirect or not.
  virtual void after_answer(const RequestSpec& /*spec*/, bool /*to_the_endpoint*/, const HttpResponse& /*answer*/) {}
  /// A redirect to `target` (absolute, http or https) is about to be followed.
  virtual void on_redirect(const std::string& /*target*/, bool /*to_the_endpoint*/) {}
};

/// How a chain ended.
enum class RedirectOutcome {
  kAnswered,          // an answer that is not a redirect (any status, or a transport failure)
  kTooManyRedirects,  // more than max_redirects in a row
  kBadScheme,         // a redirect to something other than http:// or https://
};

struct FollowedAnswer {
  RedirectOutcome outcome = RedirectOutcome::kAnswered;
  HttpResponse response;  // the last answer (for kBadScheme: the redirect that was refused)
  std::string url;        // the URL that gave it
};

class RedirectFollower {
 public:
  static constexpr int kDefaultMaxRedirects = 10;

  /// `token` (may be nullptr or empty) goes only to requests to `endpoint`'s origin. `transport` and
  /// `token` must outlive the follower.
  RedirectFollower(Transport& transport, std::string endpoint, const Secret* token,
                   int max_redirects = kDefaultMaxRedirects);

  /// Sends `spec` (its bearer_token is decided here) to spec.url, following redirects; a 2xx body goes to
  /// `sink`. At most 1 + max_redirects requests.
  FollowedAnswer get(RequestSpec spec, BodySink& sink, const std::stop_token& stop, HopObserver& observer);
  FollowedAnswer get(RequestSpec spec, BodySink& sink, const std::stop_token& stop);

  /// Whether `url` is on the endpoint's origin (where the token goes).
  bool to_the_endpoint(const std::string& url) const;

 private:
  Transport& transport_;
  std::string endpoint_;
  const Secret* token_;
  int max_redirects_;
};

/// A redirect: an answer (no transport failure) with a 3xx status and a Location.
bool is_redirect(const HttpResponse& response);

}  // namespace hfget::http
