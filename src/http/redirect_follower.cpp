// SPDX-License-Identifier: MIT
#include "http/redirect_follower.hpp"

#include <utility>

#include "http/url.hpp"

namespace hfget::http {

bool is_redirect(const HttpResponse& response) {
  return response.failure == TransportFailure::kNone && response.status >= 300 && response.status < 400 &&
         !response.redirect_url.empty();
}

RedirectFollower::RedirectFollower(Transport& transport, std::string endpoint, const Secret* token, int max_redirects)
    : transport_(transport), endpoint_(std::move(endpoint)), token_(token), max_redirects_(max_redirects) {}

bool RedirectFollower::to_the_endpoint(const std::string& url) const {
  return same_origin(url, endpoint_);
}

FollowedAnswer RedirectFollower::get(RequestSpec spec, BodySink& sink, const std::stop_token& stop) {
  HopObserver nothing_to_add;
  return get(std::move(spec), sink, stop, nothing_to_add);
}

FollowedAnswer RedirectFollower::get(RequestSpec spec, BodySink& sink, const std::stop_token& stop,
                                     HopObserver& observer) {
  const RequestSpec first = spec;
  for (int hop = 0;; ++hop) {
    if (hop > max_redirects_) return {RedirectOutcome::kTooManyRedirects, {}, spec.url};
    const bool endpoint = to_the_endpoint(spec.url);
    spec.bearer_token = endpoint ? token_ : nullptr;
    observer.before_request(spec, endpoint);
    HttpResponse response = transport_.get(spec, sink, stop);
    observer.after_answer(spec, endpoint, response);
    if (!is_redirect(response)) return {RedirectOutcome::kAnswered, std::move(response), spec.url};
    const std::optional<UrlParts> target = parse_url(response.redirect_url);
    if (!target || (target->scheme != "http" && target->scheme != "https")) {
      return {RedirectOutcome::kBadScheme, std::move(response), spec.url};
    }
    std::string next = response.redirect_url;
    observer.on_redirect(next, to_the_endpoint(next));
    // Each hop starts from the caller's request (its headers, its range) at the new URL: what an observer
    // added for one origin (If-Range) is not carried to the next.
    spec = first;
    spec.url = std::move(next);
  }
}

}  // namespace hfget::http
