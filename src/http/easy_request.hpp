// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "http/curl_handles.hpp"
#include "http/transport.hpp"

namespace hfget::http {

struct TransportSettings {
  std::chrono::seconds connect_timeout{15};
  // The minimum-rate rule: abort when the transfer averages under `speed_limit` bytes/s for `stall_timeout`
  // (curl's --speed-limit/--speed-time). 0 keeps only the stall rule: no byte at all for that long.
  std::chrono::seconds stall_timeout{60};
  std::uint64_t speed_limit = 1024;
  std::optional<std::filesystem::path> ca_bundle;
  std::optional<std::filesystem::path> ca_path;
};

/// One libcurl easy handle, reused request after request so its connections stay alive: the Transport the
/// engine uses outside unit tests. Not thread-safe: each worker owns its own. Redirects are never followed
/// here: the caller decides where the token may go.
class EasyRequest final : public Transport {
 public:
  explicit EasyRequest(TransportSettings settings);

  HttpResponse get(const RequestSpec& spec, BodySink& sink, std::stop_token stop = {}) override;

 private:
  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* self) noexcept;
  static std::size_t on_write(char* data, std::size_t size, std::size_t count, void* self) noexcept;
  static int on_progress(void* self, curl_off_t, curl_off_t, curl_off_t, curl_off_t) noexcept;
  static int on_socket_opened(void* self, curl_socket_t socket, curlsocktype purpose) noexcept;
  static int on_socket_closing(void* self, curl_socket_t socket) noexcept;
  // Acknowledges what the request in flight has read so far at once (easy_request.cpp says why).
  void acknowledge_now() noexcept;

  void configure_defaults();
  // After curl_easy_perform: the status, the redirect target, and what failed (in words fit for a message).
  void read_outcome(CURLcode code, HttpResponse& response);
  static const char* proxy_from_upper_case_variable(const std::string& url);
  void set_long(CURLoption option, long value);
  void set_offset(CURLoption option, curl_off_t value);
  void set_text(CURLoption option, const char* value);
  void set_pointer(CURLoption option, void* value);

  TransportSettings settings_;
  // The sockets libcurl has open for this handle's connections (kept by on_socket_opened and
  // on_socket_closing), each with its port numbers once connected; and the one the request in flight reads
  // from, once looked up. Declared before handle_: curl_easy_cleanup closes them through the callback.
  struct OpenSocket {
    curl_socket_t socket = CURL_SOCKET_BAD;
    long local_port = 0;
    long peer_port = 0;
  };
  std::vector<OpenSocket> sockets_;
  curl_socket_t receiving_ = CURL_SOCKET_BAD;
  bool receiving_looked_up_ = false;
  std::uint64_t body_read_ = 0;  // bytes of the answer's bodies read so far (error bodies too)
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
