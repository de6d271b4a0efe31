// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "hfget/secret.hpp"
#include "http/curl_handles.hpp"

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

struct TransportSettings {
  std::chrono::seconds connect_timeout{15};
  // The minimum-rate rule: abort when the transfer averages under `speed_limit` bytes/s for `stall_timeout`
  // (curl's --speed-limit/--speed-time). 0 keeps only the stall rule: no byte at all for that long.
  std::chrono::seconds stall_timeout{60};
  std::uint64_t speed_limit = 1024;
  std::optional<std::filesystem::path> ca_bundle;
  std::optional<std::filesystem::path> ca_path;
};

/// One libcurl easy handle, reused request after request so its connections stay alive. Not thread-safe: each
/// worker owns its own. Redirects are never followed here: the caller decides where the token may go.
class EasyRequest {
 public:
  explicit EasyRequest(TransportSettings settings);

  HttpResponse get(const RequestSpec& spec, BodySink& sink, std::stop_token stop = {});

 private:
  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* self) noexcept;
  static std::size_t on_write(char* data, std::size_t size, std::size_t count, void* self) noexcept;
  static int on_progress(void* self, curl_off_t, curl_off_t, curl_off_t, curl_off_t) noexcept;

  void configure_defaults();
  static const char* proxy_from_upper_case_variable(const std::string& url);
  void set_long(CURLoption option, long value);
  void set_offset(CURLoption option, curl_off_t value);
  void set_text(CURLoption option, const char* value);
  void set_pointer(CURLoption option, void* value);

  TransportSettings settings_;
  EasyHandle handle_;
  // libcurl's detailed words for the last failure ("Failed to connect to <proxy> port N", "CONNECT tunnel
  // failed, response 403"): curl_easy_strerror() alone would not name the host that failed.
  std::array<char, CURL_ERROR_SIZE> error_text_{};
  // State of the request in flight; reset by get().
  HttpResponse* response_ = nullptr;
  BodySink* sink_ = nullptr;
  std::stop_token stop_;
  bool sink_started_ = false;
  bool sink_stopped_ = false;
  bool headers_complete_ = false;  // the blank line that ends the last response's headers arrived
  bool wrong_encoding_ = false;    // a 2xx body came with a Content-Encoding other than identity
  std::exception_ptr pending_error_;
};

}  // namespace hfget::http
