// SPDX-License-Identifier: MIT
// A scripted http::Transport: each URL has a list of answers, served in order (the last one again for every
// later request), and every request is recorded, so a test can say "the Hub redirects to the CDN, which
// answers 403 once" and then check which host saw the token and which ranges were asked for. It hands
// bodies to the sink as EasyRequest does: on_response_start before the first byte of a 2xx, pieces of at
// most 16 KiB with on_read_done after each, other statuses' bodies in error_body, 3xx never followed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "http/transport.hpp"

namespace hfget::test_support {

struct FakeAnswer {
  long status = 200;
  std::map<std::string, std::string> headers;  // lowercase names, as EasyRequest reports them
  std::string body;                            // sent as it is (a 2xx to the sink, else to error_body)
  std::string redirect_to;                     // absolute: the Location of a 3xx
  // Serve the requested range of this content instead of `body`: 206 with its Content-Range (200 with the
  // whole of it for a request without a Range, or whose If-Range does not match `etag`).
  std::optional<std::string> content;
  // The connection drops (kConnectionLost) after this many body bytes.
  std::optional<std::size_t> cut_after;
  http::TransportFailure failure = http::TransportFailure::kNone;  // no answer at all: this failure

  static FakeAnswer redirect(std::string to, long status = 302) {
    FakeAnswer answer;
    answer.status = status;
    answer.redirect_to = std::move(to);
    return answer;
  }
  static FakeAnswer ranged(std::string content, std::string etag = "") {
    FakeAnswer answer;
    answer.content = std::move(content);
    if (!etag.empty()) answer.headers["etag"] = std::move(etag);
    return answer;
  }
  static FakeAnswer with_status(long status, std::map<std::string, std::string> headers = {}, std::string body = "") {
    FakeAnswer answer;
    answer.status = status;
    answer.headers = std::move(headers);
    answer.body = std::move(body);
    return answer;
  }
  static FakeAnswer json(std::string body, std::map<std::string, std::string> headers = {}) {
    headers["content-type"] = "application/json";
    return with_status(200, std::move(headers), std::move(body));
  }
  static FakeAnswer failing(http::TransportFailure failure) {
    FakeAnswer answer;
    answer.status = 0;
    answer.failure = failure;
    return answer;
  }
};

struct RecordedRequest {
  std::string url;
  bool bearer = false;  // an Authorization header would have been sent
  std::optional<std::uint64_t> range_from;
  std::optional<std::uint64_t> range_last;
  std::vector<std::string> extra_headers;

  bool has_header(const std::string& line) const {
    return std::find(extra_headers.begin(), extra_headers.end(), line) != extra_headers.end();
  }
};

class FakeTransport final : public http::Transport {
 public:
  /// Appends answers for `url`; once they are used up, the last one is served again.
  void script(const std::string& url, std::vector<FakeAnswer> answers) {
    std::lock_guard lock(mutex_);
    for (FakeAnswer& answer : answers) scripts_[url].push_back(std::move(answer));
  }

  std::vector<RecordedRequest> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  std::vector<RecordedRequest> requests_to(const std::string& url) const {
    std::vector<RecordedRequest> matching;
    for (const RecordedRequest& request : requests()) {
      if (request.url == url) matching.push_back(request);
    }
    return matching;
  }

  http::HttpResponse get(const http::RequestSpec& spec, http::BodySink& sink, std::stop_token stop = {}) override {
    const FakeAnswer answer = next_answer(spec);
    http::HttpResponse response;
    if (stop.stop_requested()) {
      response.failure = http::TransportFailure::kCancelled;
      response.failure_message = "cancelled";
      return response;
    }
    if (answer.failure != http::TransportFailure::kNone) {
      response.failure = answer.failure;
      response.failure_message = "scripted failure";
      return response;
    }
    response.status = answer.status;
    response.headers = answer.headers;
    std::string body = answer.body;
    if (answer.content) body = serve_range(spec, answer, response);
    if (response.status >= 300 && response.status < 400) response.redirect_url = answer.redirect_to;
    const std::size_t length = std::min(body.size(), answer.cut_after.value_or(body.size()));
    const bool cut = length < body.size();
    if (response.status < 200 || response.status >= 300) {
      response.error_body = body.substr(0, length);
    } else if (!deliver(std::string_view(body).substr(0, length), sink, response)) {
      response.failure = http::TransportFailure::kStoppedBySink;
      return response;
    }
    if (cut) {
      response.failure = http::TransportFailure::kConnectionLost;
      response.failure_message = "the scripted connection dropped";
    }
    return response;
  }

 private:
  FakeAnswer next_answer(const http::RequestSpec& spec) {
    std::lock_guard lock(mutex_);
    requests_.push_back(RecordedRequest{spec.url, spec.bearer_token != nullptr && !spec.bearer_token->empty(),
                                        spec.range_from, spec.range_last, spec.extra_headers});
    const auto it = scripts_.find(spec.url);
    if (it == scripts_.end() || it->second.empty()) return FakeAnswer::failing(http::TransportFailure::kConnect);
    FakeAnswer answer = it->second.front();
    if (it->second.size() > 1) it->second.pop_front();
    return answer;
  }

  static std::string serve_range(const http::RequestSpec& spec, const FakeAnswer& answer,
                                 http::HttpResponse& response) {
    const std::string& content = *answer.content;
    const auto etag = answer.headers.find("etag");
    const bool if_range_fails =
        std::any_of(spec.extra_headers.begin(), spec.extra_headers.end(), [&](const std::string& line) {
          return line.rfind("If-Range: ", 0) == 0 && (etag == answer.headers.end() || line.substr(10) != etag->second);
        });
    if (!spec.range_from || if_range_fails) return content;
    const std::uint64_t first = *spec.range_from;
    const std::uint64_t last =
        std::min<std::uint64_t>(spec.range_last.value_or(content.size() - 1), content.size() - 1);
    if (first >= content.size()) {
      response.status = 416;
      response.headers["content-range"] = "bytes */" + std::to_string(content.size());
      return "";
    }
    response.status = 206;
    response.headers["content-range"] =
        "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" + std::to_string(content.size());
    return content.substr(first, last - first + 1);
  }

  // As libcurl does: a 2xx without a body byte never starts the sink.
  static bool deliver(std::string_view body, http::BodySink& sink, http::HttpResponse& response) {
    if (body.empty()) return true;
    sink.on_response_start(response);
    constexpr std::size_t kPiece = 16 << 10;
    for (std::size_t done = 0; done < body.size(); done += kPiece) {
      const std::string_view piece = body.substr(done, kPiece);
      if (!sink.on_body(std::as_bytes(std::span(piece.data(), piece.size())))) return false;
      response.body_bytes += piece.size();
      sink.on_read_done();
    }
    return true;
  }

  mutable std::mutex mutex_;
  std::map<std::string, std::deque<FakeAnswer>> scripts_;
  std::vector<RecordedRequest> requests_;
};

// One connection's transport when the connections of a download share one scripted transport (a transport
// factory hands out one per connection): sends through `shared`, which must outlive it.
template <typename Shared>
class LentTransport final : public http::Transport {
 public:
  explicit LentTransport(Shared& shared) : shared_(shared) {}
  http::HttpResponse get(const http::RequestSpec& spec, http::BodySink& sink, std::stop_token stop) override {
    return shared_.get(spec, sink, stop);
  }

 private:
  Shared& shared_;
};

}  // namespace hfget::test_support
