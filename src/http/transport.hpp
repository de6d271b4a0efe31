// SPDX-License-Identifier: MIT
// The seam between the download engine and the network. RangeFetcher and HubClient decide everything that
// matters (which host sees the token, which redirect to follow, what to retry, whether a 206 continues the
// file) and send each request through this one call; EasyRequest (libcurl) is the implementation in the
// program, and tests/unit/support/fake_transport.hpp a scripted one, so those decisions are unit-tested
// without sockets. An implementation sends exactly one request: it follows no redirect and retries nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "hfget/secret.hpp"

namespace hfget::http {

/// Why a request produced no complete HTTP answer. kNone means an answer arrived (any status).
enum class TransportFailure {
  kNone,
  kConnect,          // could not resolve or connect
  kTimeout,          // connect timeout, or under the minimum rate (or no byte) for the stall window
  kConnectionLost,   // reset, closed early (also in the middle of the headers), short body
  kMalformedAnswer,  // an answer hfget cannot use: a header line past libcurl's limit, an encoding not asked for
  kTls,              // certificate or handshake problem: retrying will not help
  kStoppedBySink,    // the body sink asked to stop (e.g. the server sent more than expected)
  kCancelled,        // the stop token fired (SIGINT/SIGTERM)
  kOther,
};

struct HttpResponse {
  TransportFailure failure = TransportFailure::kNone;
  std::string failure_message;  // libcurl's words, for the log and error messages
  long status = 0;
  std::map<std::string, std::string> headers;  // lowercase names; the last response only
  std::string redirect_url;                    // absolute target of a 3xx Location, if any
  std::string error_body;                      // body of a non-2xx answer, truncated
  std::uint64_t body_bytes = 0;                // bytes handed to the sink

  const std::string* header(const std::string& lowercase_name) const;
};

/// Receives the body of a 2xx answer. Bodies of other answers never reach it.
class BodySink {
 public:
  virtual ~BodySink() = default;
  /// Called once the status line and headers of a 2xx answer are in, before any body byte.
  virtual void on_response_start(const HttpResponse& /*head*/) {}
  /// Returns false to stop the transfer cleanly (TransportFailure::kStoppedBySink). May throw hfget::Error.
  virtual bool on_body(std::span<const std::byte> bytes) = 0;
  /// Called after each pass of libcurl's transfer loop (after what one read from the socket delivered, in
  /// on_body's pieces of at most 16 KiB, and at least about once a second): the moment to write a batch.
  /// May throw hfget::Error.
  virtual void on_read_done() {}
};

/// Collects a body in memory, refusing more than `max_bytes` (a hostile server cannot exhaust memory).
class StringSink final : public BodySink {
 public:
  explicit StringSink(std::size_t max_bytes) : max_bytes_(max_bytes) {}
  bool on_body(std::span<const std::byte> bytes) override;
  const std::string& text() const noexcept { return text_; }
  bool overflowed() const noexcept { return overflowed_; }

 private:
  std::size_t max_bytes_;
  std::string text_;
  bool overflowed_ = false;
};

struct RequestSpec {
  std::string url;
  const Secret* bearer_token = nullptr;     // sent as Authorization only when set: the caller decides the host
  std::optional<std::uint64_t> range_from;  // "Range: bytes=N-"
  std::optional<std::uint64_t> range_last;  // with range_from: "Range: bytes=N-M" (M inclusive)
  std::vector<std::string> extra_headers;
};

/// Sends one GET and hands a 2xx body to `sink` as it arrives; any other status's body lands, truncated, in
/// HttpResponse::error_body. A 3xx is returned with its absolute redirect_url, never followed. Failures
/// to get an answer are in HttpResponse::failure, not thrown; what `sink` throws is rethrown.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual HttpResponse get(const RequestSpec& spec, BodySink& sink, std::stop_token stop = {}) = 0;
};

/// Makes a transport for each user of one (each download connection, the Hub client): libcurl in the program,
/// a scripted one in tests.
using TransportFactory = std::function<std::unique_ptr<Transport>()>;

}  // namespace hfget::http
