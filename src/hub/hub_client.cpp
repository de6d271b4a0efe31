// SPDX-License-Identifier: MIT
// Hub tree listings are paginated with RFC 8288 Link headers; we follow rel="next" until it is absent, and
// refuse a cycle, a page on another host and an absurd number of pages, so a broken server cannot keep us
// listing forever.
#include "hub/hub_client.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <set>

#include "hfget/error.hpp"
#include "http/link_header.hpp"
#include "http/redirect_follower.hpp"
#include "http/retrier.hpp"
#include "http/url.hpp"
#include "hub/hub_errors.hpp"
#include "hub/hub_urls.hpp"
#include "hub/tree_listing.hpp"

namespace hfget::hub {
namespace {

// A page of 1000 entries is ~300 KB; this leaves room for pages a hundred times larger.
constexpr std::size_t kMaxJsonBytes = 64 * 1024 * 1024;
constexpr int kMaxPages = 100'000;
constexpr int kMaxRedirects = 10;

Error transport_error(const http::HttpResponse& response, const std::string& url, const std::string& note = "") {
  if (response.failure == http::TransportFailure::kCancelled) {
    return Error(ErrorCode::kInterrupted, "interrupted");
  }
  if (response.failure == http::TransportFailure::kTls) {
    return Error(ErrorCode::kNetwork,
                 fmt::format("TLS error talking to {}: {} (a private CA? see --ca-bundle){}",
                             http::parse_url(url) ? http::parse_url(url)->host : url, response.failure_message, note));
  }
  if (response.failure == http::TransportFailure::kMalformedAnswer) {
    // The Hub was reached: "cannot reach" would send the user after their network.
    return Error(ErrorCode::kNetwork,
                 fmt::format("the Hub's answer to {} is unusable: {}", url, response.failure_message));
  }
  return Error(ErrorCode::kNetwork,
               fmt::format("cannot reach the Hub at {}: {}{}", url, response.failure_message, note));
}

// When the time limit rather than the attempts ended the retries, the message says so: the user may want
// a longer --retry-max-time rather than more --retries.
Error noting_time_limit(const Error& error, const http::Retrier& retrier) {
  if (!retrier.out_of_time()) return error;
  return Error(error.code(),
               fmt::format("{} (gave up after {} attempts and {}s, --retry-max-time)", error.what(),
                           retrier.attempts_failed(), retrier.max_time().count()),
               error.file());
}

}  // namespace

HubClient::HubClient(HubConnection settings, std::stop_token stop)
    : settings_(std::move(settings)),
      stop_(std::move(stop)),
      owned_transport_(std::make_unique<http::EasyRequest>(transport_settings(settings_))),
      transport_(*owned_transport_) {}

HubClient::HubClient(HubConnection settings, http::Transport& transport, std::stop_token stop)
    : settings_(std::move(settings)), stop_(std::move(stop)), transport_(transport) {}

HubClient::JsonAnswer HubClient::get_following_redirects(const std::string& first_url) {
  // Only a 2xx body reaches the sink, so one sink serves the whole chain.
  http::StringSink sink(kMaxJsonBytes);
  http::RequestSpec spec;
  spec.url = first_url;
  spec.extra_headers.emplace_back("Accept: application/json");
  struct LogEachHop final : http::HopObserver {
    void after_answer(const http::RequestSpec& sent, bool /*to_the_endpoint*/,
                      const http::HttpResponse& response) override {
      spdlog::debug("GET {} -> HTTP {} {}", sent.url, response.status, response.failure_message);
    }
  } log_each_hop;
  http::RedirectFollower follower(transport_, settings_.endpoint, &settings_.token, kMaxRedirects);
  http::FollowedAnswer followed = follower.get(std::move(spec), sink, stop_, log_each_hop);
  if (sink.overflowed()) {
    throw Error(ErrorCode::kNetwork,
                fmt::format("the Hub's answer to {} is larger than {} bytes", followed.url, kMaxJsonBytes));
  }
  switch (followed.outcome) {
    case http::RedirectOutcome::kAnswered: break;
    case http::RedirectOutcome::kTooManyRedirects:
      throw Error(ErrorCode::kNetwork, "too many redirects from " + first_url);
    case http::RedirectOutcome::kBadScheme:
      throw Error(ErrorCode::kNetwork, "the Hub redirected " + followed.url + " to an unsupported URL");
  }
  return JsonAnswer{std::move(followed.response), sink.text(), followed.url};
}

std::string HubClient::endpoint_note() const {
  if (settings_.endpoint_origin.empty()) return "";
  return fmt::format(" (the endpoint comes from {})", settings_.endpoint_origin);
}

HubClient::JsonAnswer HubClient::with_retries(const std::function<JsonAnswer()>& send,
                                              const std::function<bool(JsonAnswer&)>& usable,
                                              const RequestContext& context) {
  http::Retrier retrier(settings_.max_attempts, settings_.retry_base_delay, stop_, settings_.retry_max_time);
  while (true) {
    JsonAnswer answer = send();
    http::HttpResponse& response = answer.response;
    const bool first_contact = !answered_;
    if (response.failure == http::TransportFailure::kNone) answered_ = true;
    if (usable(answer)) return answer;
    const http::Attempt attempt{response.failure, response.status, first_contact};
    const std::optional<http::RequestedWait> requested = http::requested_wait(response);
    // Said at once and on the terminal too: a wrong HF_ENDPOINT or a dead proxy would otherwise look like a
    // hang for the whole backoff (about a minute with the default --retries).
    const auto announce = [&](std::chrono::milliseconds delay) {
      const std::string said = response.failure == http::TransportFailure::kNone
                                   ? fmt::format("the Hub answered HTTP {} to {}{}", response.status, answer.final_url,
                                                 requested ? " (" + requested->why + ")" : "")
                                   : std::string(transport_error(response, answer.final_url).what());
      spdlog::warn("{}; retrying in {:.1f}s (attempt {} of {})", said, static_cast<double>(delay.count()) / 1000.0,
                   retrier.attempts_failed() + 1, retrier.max_attempts());
    };
    if (retrier.wait_before_retry(attempt, requested ? std::optional(requested->wait) : std::nullopt, announce)) {
      continue;
    }
    if (stop_.stop_requested()) throw Error(ErrorCode::kInterrupted, "interrupted");
    if (response.failure != http::TransportFailure::kNone) {
      const bool refused_at_once = first_contact && response.failure == http::TransportFailure::kConnect;
      throw noting_time_limit(
          transport_error(response, answer.final_url,
                          endpoint_note() + (refused_at_once ? "; not retried: nothing has answered there yet" : "")),
          retrier);
    }
    // 408 and 429 come from proxies and rate limiters in front of a real Hub too: they are what they say.
    const bool retried_status = response.status == 408 || response.status == 429;
    if (response.status >= 400 && response.status < 500 && !retried_status && !looks_like_hub_error(response)) {
      throw Error(ErrorCode::kNetwork,
                  fmt::format("{} answered HTTP {} with a page that is not the Hub's (no X-Error-Code, not JSON): is "
                              "{} a Hugging Face Hub?{}",
                              answer.final_url, response.status, settings_.endpoint, endpoint_note()));
    }
    throw noting_time_limit(error_from_response(response, context), retrier);
  }
}

HubClient::JsonAnswer HubClient::get_json(const std::string& url, const std::string& revision, const RepoId& repo,
                                          std::string_view what) {
  const auto usable = [&](JsonAnswer& answer) {
    http::HttpResponse& response = answer.response;
    const bool answered_2xx =
        response.failure == http::TransportFailure::kNone && response.status >= 200 && response.status < 300;
    if (!answered_2xx) return false;
    if (looks_like_html(answer.body)) {
      // A web server's index or login page where the Hub answers JSON: no retry makes it a Hub.
      throw Error(ErrorCode::kNetwork,
                  fmt::format("{} answered the {} request with an HTML page, not the Hub's JSON: is {} a Hugging Face "
                              "Hub?{}",
                              answer.final_url, what, settings_.endpoint, endpoint_note()));
    }
    if (!answer.body.empty()) return true;
    // No JSON answer of the Hub is empty ("[]" and "{}" are not): the connection dropped before the body,
    // so retry it as one instead of reporting malformed JSON.
    response.failure = http::TransportFailure::kConnectionLost;
    response.failure_message = fmt::format("the Hub sent an empty {} (HTTP {} without a body)", what, response.status);
    return false;
  };
  return with_retries([&] { return get_following_redirects(url); }, usable,
                      RequestContext{&repo, revision, {}, repo_page_url(settings_.endpoint, repo)});
}

std::string HubClient::resolve_commit(const RepoId& repo, const std::string& revision) {
  if (is_commit_id(revision)) return revision;
  return revision_info(repo, revision).commit;
}

RevisionInfo HubClient::revision_info(const RepoId& repo, const std::string& revision) {
  const JsonAnswer answer =
      get_json(revision_info_url(settings_.endpoint, repo, revision), revision, repo, "repo info");
  return parse_revision_info(answer.body);
}

void HubClient::check_file_access(const RepoId& repo, const std::string& commit, const std::string& path) {
  const std::string url = resolve_url(settings_.endpoint, repo, commit, path);
  const auto send = [&] {
    // One byte is asked for; a server that sends the whole file instead is cut off (the answer is in).
    http::StringSink sink(1024);
    http::RequestSpec spec;
    spec.url = url;
    spec.bearer_token = &settings_.token;  // the endpoint's own URL
    spec.range_from = 0;
    spec.range_last = 0;
    http::HttpResponse response = transport_.get(spec, sink, stop_);
    spdlog::debug("GET {} (access check) -> HTTP {} {}", url, response.status, response.failure_message);
    return JsonAnswer{std::move(response), {}, url};
  };
  const auto usable = [](JsonAnswer& answer) {
    const http::HttpResponse& response = answer.response;
    const bool has_status =
        response.failure == http::TransportFailure::kNone || response.failure == http::TransportFailure::kStoppedBySink;
    // The bytes (206, or 200 cut off), a redirect to the CDN, or 416 for an empty file: the Hub let the
    // token through to the contents.
    return has_status && ((response.status >= 200 && response.status < 400) || response.status == 416);
  };
  with_retries(send, usable, RequestContext{&repo, commit, path, repo_page_url(settings_.endpoint, repo)});
}

std::vector<RemoteFile> HubClient::list_files(const RepoId& repo, const std::string& commit) {
  std::vector<RemoteFile> files;
  std::set<std::string> visited;
  std::optional<std::string> url = tree_url(settings_.endpoint, repo, commit);
  for (int page = 0; url; ++page) {
    if (page >= kMaxPages) throw Error(ErrorCode::kNetwork, "the Hub's tree listing has too many pages");
    if (!visited.insert(*url).second) throw Error(ErrorCode::kNetwork, "the Hub's tree listing pages loop");
    if (!http::same_origin(*url, settings_.endpoint)) {
      throw Error(ErrorCode::kNetwork, "the Hub's tree listing points to another server for its next page");
    }
    JsonAnswer answer = get_json(*url, commit, repo, "tree listing");
    std::vector<RemoteFile> page_files = parse_tree_page(answer.body);
    files.insert(files.end(), std::make_move_iterator(page_files.begin()), std::make_move_iterator(page_files.end()));
    const std::string* link = answer.response.header("link");
    const std::optional<std::string> next = link ? http::next_link(*link) : std::nullopt;
    url = next ? http::resolve_reference(answer.final_url, *next) : std::nullopt;
    if (next && !url) throw Error(ErrorCode::kNetwork, "the Hub's tree listing has an invalid next-page link");
  }
  return files;
}

XetAccess HubClient::xet_read_access(const RepoId& repo, const std::string& commit) {
  const JsonAnswer answer =
      get_json(xet_read_token_url(settings_.endpoint, repo, commit), commit, repo, "Xet read token");
  XetAccess access = parse_xet_access(answer.response, answer.body);
  // A token sent in the clear is a token given away: over https from the Hub, https to the CAS too.
  if (settings_.endpoint.rfind("https://", 0) == 0 && access.cas_url.rfind("https://", 0) != 0) {
    throw Error(ErrorCode::kNetwork,
                "the Hub's Xet read token names a CAS over plain http (" + access.cas_url + "); not sending it there");
  }
  return access;
}

}  // namespace hfget::hub
