// SPDX-License-Identifier: MIT
// Every libcurl option hfget uses is set in this file, through setters that check the CURLcode and pass the
// exact type libcurl reads (curl_easy_setopt is varargs; a wrong type is undefined behaviour).
#include "http/easy_request.hpp"

#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <tuple>
#include <utility>

#include "hfget/library.hpp"
#include "util/printable.hpp"

namespace hfget::http {
namespace {

constexpr std::size_t kMaxErrorBodyBytes = 64 * 1024;
constexpr long kReceiveBufferBytes = 512 * 1024;
// How much of each answer is acknowledged as it is read (EasyRequest::acknowledge_now): its first segments,
// at least two of loopback's 64 KiB ones.
constexpr std::uint64_t kAcknowledgedBytes = 256 * 1024;

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' || text.back() == '\n')) {
    text.remove_suffix(1);
  }
  return text;
}

#ifdef TCP_QUICKACK
// The port numbers of a connected socket, 0 where it cannot say (not connected yet, not a TCP socket).
std::pair<long, long> ports_of(curl_socket_t socket) noexcept {
  sockaddr_storage local{};
  sockaddr_storage peer{};
  socklen_t local_length = sizeof local;
  socklen_t peer_length = sizeof peer;
  if (::getsockname(socket, reinterpret_cast<sockaddr*>(&local), &local_length) != 0 ||
      ::getpeername(socket, reinterpret_cast<sockaddr*>(&peer), &peer_length) != 0) {
    return {0, 0};
  }
  const auto port = [](const sockaddr_storage& address) -> long {
    if (address.ss_family == AF_INET) {
      sockaddr_in v4{};
      std::memcpy(&v4, &address, sizeof v4);
      return ntohs(v4.sin_port);
    }
    if (address.ss_family == AF_INET6) {
      sockaddr_in6 v6{};
      std::memcpy(&v6, &address, sizeof v6);
      return ntohs(v6.sin6_port);
    }
    return 0;
  };
  return {port(local), port(peer)};
}
#endif

// Accept-Encoding: identity was sent, so a body is usable only when every coding applied is identity.
bool only_identity(std::string_view content_encoding) {
  while (!content_encoding.empty()) {
    const std::size_t comma = content_encoding.find(',');
    if (const std::string_view coding = trim(content_encoding.substr(0, comma));
        !coding.empty() && lowercase(coding) != "identity") {
      return false;
    }
    content_encoding = comma == std::string_view::npos ? std::string_view{} : content_encoding.substr(comma + 1);
  }
  return true;
}

TransportFailure classify(CURLcode code) {
  switch (code) {
    case CURLE_OK: return TransportFailure::kNone;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT: return TransportFailure::kConnect;
    case CURLE_OPERATION_TIMEDOUT: return TransportFailure::kTimeout;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return TransportFailure::kConnectionLost;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR: return TransportFailure::kTls;
    case CURLE_ABORTED_BY_CALLBACK: return TransportFailure::kCancelled;
    default: return TransportFailure::kOther;
  }
}

}  // namespace

EasyRequest::EasyRequest(TransportSettings settings) : settings_(std::move(settings)), handle_(curl_easy_init()) {
  if (!handle_) throw Error(ErrorCode::kInternal, "libcurl could not create a handle");
  configure_defaults();
}

void EasyRequest::set_long(CURLoption option, long value) {
  if (curl_easy_setopt(handle_.get(), option, value) != CURLE_OK) {
    throw Error(ErrorCode::kInternal, "libcurl rejected an option");
  }
}
void EasyRequest::set_offset(CURLoption option, curl_off_t value) {
  if (curl_easy_setopt(handle_.get(), option, value) != CURLE_OK) {
    throw Error(ErrorCode::kInternal, "libcurl rejected an option");
  }
}
void EasyRequest::set_text(CURLoption option, const char* value) {
  if (curl_easy_setopt(handle_.get(), option, value) != CURLE_OK) {
    throw Error(ErrorCode::kInternal, "libcurl rejected an option");
  }
}
void EasyRequest::set_pointer(CURLoption option, void* value) {
  if (curl_easy_setopt(handle_.get(), option, value) != CURLE_OK) {
    throw Error(ErrorCode::kInternal, "libcurl rejected an option");
  }
}

namespace {

const char* non_empty_env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

const char* EasyRequest::proxy_from_upper_case_variable(const std::string& url) {
  if (url.rfind("http://", 0) != 0 && url.rfind("HTTP://", 0) != 0) return nullptr;
  if (non_empty_env("http_proxy") != nullptr) return nullptr;
  return non_empty_env("HTTP_PROXY");
}

void EasyRequest::configure_defaults() {
  // Worker threads: libcurl must not use signals for timeouts.
  set_long(CURLOPT_NOSIGNAL, 1L);
  // Only http and https, also for any redirect (never file:// or ftp:// from a hostile Location).
  set_text(CURLOPT_PROTOCOLS_STR, "http,https");
  set_text(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  set_long(CURLOPT_FOLLOWLOCATION, 0L);
  set_text(CURLOPT_USERAGENT, version_string());
  set_long(CURLOPT_CONNECTTIMEOUT, static_cast<long>(settings_.connect_timeout.count()));
  // A stalled connection is the "stuck at 99 %" of other tools, and a drip of a byte a second holds a
  // connection as long: averaging under the minimum rate for the window aborts it (at least 1 byte/s, so
  // that a speed limit of 0 still drops a connection that delivers nothing).
  set_long(CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(std::clamp<std::uint64_t>(settings_.speed_limit, 1, LONG_MAX)));
  set_long(CURLOPT_LOW_SPEED_TIME, static_cast<long>(settings_.stall_timeout.count()));
  set_long(CURLOPT_TCP_KEEPALIVE, 1L);
  set_long(CURLOPT_BUFFERSIZE, kReceiveBufferBytes);
  set_long(CURLOPT_FAILONERROR, 0L);
  if (settings_.ca_bundle) set_text(CURLOPT_CAINFO, settings_.ca_bundle->c_str());
  if (settings_.ca_path) set_text(CURLOPT_CAPATH, settings_.ca_path->c_str());
  set_long(CURLOPT_VERBOSE, 0L);  // -v logs requests itself, with the token redacted
  set_pointer(CURLOPT_ERRORBUFFER, error_text_.data());

  set_pointer(CURLOPT_HEADERDATA, this);
  if (curl_easy_setopt(handle_.get(), CURLOPT_HEADERFUNCTION, &EasyRequest::on_header) != CURLE_OK ||
      curl_easy_setopt(handle_.get(), CURLOPT_WRITEFUNCTION, &EasyRequest::on_write) != CURLE_OK ||
      curl_easy_setopt(handle_.get(), CURLOPT_XFERINFOFUNCTION, &EasyRequest::on_progress) != CURLE_OK ||
      curl_easy_setopt(handle_.get(), CURLOPT_SOCKOPTFUNCTION, &EasyRequest::on_socket_opened) != CURLE_OK ||
      curl_easy_setopt(handle_.get(), CURLOPT_CLOSESOCKETFUNCTION, &EasyRequest::on_socket_closing) != CURLE_OK) {
    throw Error(ErrorCode::kInternal, "libcurl rejected a callback");
  }
  set_pointer(CURLOPT_WRITEDATA, this);
  set_pointer(CURLOPT_XFERINFODATA, this);
  set_pointer(CURLOPT_SOCKOPTDATA, this);
  set_pointer(CURLOPT_CLOSESOCKETDATA, this);
  set_long(CURLOPT_NOPROGRESS, 0L);
}

HttpResponse EasyRequest::get(const RequestSpec& spec, BodySink& sink, std::stop_token stop) {
  HttpResponse response;
  response_ = &response;
  sink_ = &sink;
  stop_ = std::move(stop);
  sink_started_ = false;
  sink_stopped_ = false;
  receiving_ = CURL_SOCKET_BAD;
  receiving_looked_up_ = false;
  body_read_ = 0;
  headers_complete_ = false;
  wrong_encoding_ = false;
  pending_error_ = nullptr;

  HeaderList headers;
  // identity: a gzipped body would break the size and hash checks, and Range offsets refer to raw bytes.
  headers.append("Accept-Encoding: identity");
  if (spec.bearer_token != nullptr && !spec.bearer_token->empty()) {
    headers.append("Authorization: Bearer " + spec.bearer_token->reveal());
  }
  for (const std::string& line : spec.extra_headers) headers.append(line);

  set_text(CURLOPT_URL, spec.url.c_str());
  set_long(CURLOPT_HTTPGET, 1L);
  set_pointer(CURLOPT_HTTPHEADER, headers.get());
  std::string range;
  if (spec.range_from) {
    range = std::to_string(*spec.range_from) + "-" + (spec.range_last ? std::to_string(*spec.range_last) : "");
  }
  set_text(CURLOPT_RANGE, spec.range_from ? range.c_str() : nullptr);
  // libcurl reads only the lower-case http_proxy for http URLs (a guard for CGI programs, where HTTP_PROXY
  // can come from a request header); huggingface_hub (requests) honours HTTP_PROXY too, and so do we.
  // NULL restores libcurl's own reading of the environment; no_proxy/NO_PROXY applies either way.
  const char* upper_http_proxy = proxy_from_upper_case_variable(spec.url);
  set_text(CURLOPT_PROXY, upper_http_proxy);

  error_text_[0] = '\0';
  const CURLcode code = curl_easy_perform(handle_.get());
  set_pointer(CURLOPT_HTTPHEADER, nullptr);  // `headers` dies with this scope
  response_ = nullptr;
  sink_ = nullptr;

  if (pending_error_) std::rethrow_exception(pending_error_);

  read_outcome(code, response);
  return response;
}

void EasyRequest::read_outcome(CURLcode code, HttpResponse& response) {
  curl_easy_getinfo(handle_.get(), CURLINFO_RESPONSE_CODE, &response.status);
  if (response.status >= 300 && response.status < 400) {
    char* location = nullptr;
    if (curl_easy_getinfo(handle_.get(), CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location != nullptr) {
      response.redirect_url = location;
    }
  }
  response.failure = sink_stopped_ ? TransportFailure::kStoppedBySink : classify(code);
  // libcurl's words may quote what the server sent (a URL, a header it choked on): escaped all the same.
  if (code != CURLE_OK)
    response.failure_message =
        util::printable(error_text_[0] != '\0' ? error_text_.data() : curl_easy_strerror(code), CURL_ERROR_SIZE);
  if (wrong_encoding_) {
    const std::string* encoding = response.header("content-encoding");
    response.failure = TransportFailure::kMalformedAnswer;
    response.failure_message =
        fmt::format("the server sent a body with Content-Encoding '{}' although hfget asked for identity (HTTP {})",
                    util::printable(encoding != nullptr ? *encoding : ""), response.status);
  } else if (!headers_complete_ && code == CURLE_OUT_OF_MEMORY) {
    // libcurl refuses a header line past CURL_MAX_HTTP_HEADER with "Out of memory", which reads like a local
    // problem; while the headers are still coming in, it is the server's line.
    response.failure = TransportFailure::kMalformedAnswer;
    response.failure_message =
        fmt::format("the server sent a header line longer than {} KiB", CURL_MAX_HTTP_HEADER / 1024);
  } else if (!headers_complete_ && code == CURLE_OK) {
    // A clean close (FIN) after the status line but before the blank line ends the headers: libcurl reports
    // a complete answer with an empty body. It is a dropped connection, whatever the status said.
    response.failure = TransportFailure::kConnectionLost;
    response.failure_message =
        fmt::format("the server closed the connection in the middle of the headers (HTTP {})", response.status);
  }
  long connect_status = 0;
  if (code != CURLE_OK && curl_easy_getinfo(handle_.get(), CURLINFO_HTTP_CONNECTCODE, &connect_status) == CURLE_OK &&
      connect_status >= 300) {
    response.failure_message = fmt::format("the proxy refused the tunnel (CONNECT answered HTTP {})", connect_status);
  }
}

std::size_t EasyRequest::on_header(char* data, std::size_t size, std::size_t count, void* self) noexcept {
  auto* request = static_cast<EasyRequest*>(self);
  const std::size_t length = size * count;
  try {
    const std::string_view line(data, length);
    if (line.rfind("HTTP/", 0) == 0) {
      request->response_->headers.clear();  // a new response (after 100-continue, or a proxy CONNECT)
      request->headers_complete_ = false;
      return length;
    }
    if (line == "\r\n" || line == "\n") {
      request->headers_complete_ = true;
      return length;
    }
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      const std::string name = lowercase(trim(line.substr(0, colon)));
      const std::string_view value = trim(line.substr(colon + 1));
      std::string& slot = request->response_->headers[name];
      // Repeated, a header's values add up (RFC 9110 §5.3); for the encoding that matters: a second
      // Content-Encoding line must not hide a gzip behind an identity.
      if (name == "content-encoding" && !slot.empty()) {
        slot += ", ";
        slot += value;
      } else {
        slot = std::string(value);
      }
    }
    return length;
  } catch (...) {
    request->pending_error_ = std::current_exception();
    return 0;
  }
}

std::size_t EasyRequest::on_write(char* data, std::size_t size, std::size_t count, void* self) noexcept {
  auto* request = static_cast<EasyRequest*>(self);
  const std::size_t length = size * count;
  // Before this body is written and hashed: the server sends meanwhile. Only at an answer's start: a lone
  // segment is left unacknowledged in an answer of one or two; from the third on the kernel acknowledges
  // every second one at once, and an ACK per read of a long body would only cost a system call each.
  if (request->body_read_ < kAcknowledgedBytes) request->acknowledge_now();
  request->body_read_ += length;
  try {
    HttpResponse& response = *request->response_;
    long status = 0;
    curl_easy_getinfo(request->handle_.get(), CURLINFO_RESPONSE_CODE, &status);
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), length);
    if (status < 200 || status >= 300) {
      const std::size_t room = kMaxErrorBodyBytes - std::min(kMaxErrorBodyBytes, response.error_body.size());
      response.error_body.append(data, std::min(room, length));
      return length;
    }
    if (!request->sink_started_) {
      if (const std::string* encoding = response.header("content-encoding"); encoding && !only_identity(*encoding)) {
        // Sizes, hashes and Range offsets all count raw bytes: such a body is useless, and no byte of it
        // may reach the file.
        request->wrong_encoding_ = true;
        return CURL_WRITEFUNC_ERROR;
      }
      request->sink_started_ = true;
      response.status = status;
      request->sink_->on_response_start(response);
    }
    if (!request->sink_->on_body(bytes)) {
      request->sink_stopped_ = true;
      return CURL_WRITEFUNC_ERROR;
    }
    response.body_bytes += length;
    return length;
  } catch (...) {
    request->pending_error_ = std::current_exception();
    return CURL_WRITEFUNC_ERROR;
  }
}

int EasyRequest::on_progress(void* self, curl_off_t, curl_off_t, curl_off_t, curl_off_t) noexcept {
  auto* request = static_cast<EasyRequest*>(self);
  if (request->stop_.stop_requested()) return 1;
  if (request->sink_started_ && !request->sink_stopped_ && !request->pending_error_) {
    try {
      request->sink_->on_read_done();
    } catch (...) {
      request->pending_error_ = std::current_exception();
      return 1;
    }
  }
  return 0;
}

// Sends the ACK for what was just read now rather than up to 40 ms later. A server with Nagle's algorithm on
// (nginx serving files with sendfile and tcp_nopush corks each answer and never sets TCP_NODELAY) holds an
// answer's last, partial segment until the segment before it is acknowledged, and Linux delays the ACK of a
// lone segment on a request-response connection (its "pingpong" mode) by up to 40 ms. An answer of one to two
// segments (a xorb range of 65-130 KB on loopback, whose segments are 64 KB) then took 42 ms instead of 0.2
// against the test CDN's nginx (docs/benchmarks.md): a shard's last chunks are such a request, at the end of
// its last range. TCP_QUICKACK is not sticky: set after each read, it leaves pingpong mode and sends the ACK
// still pending: one setsockopt per read, of an answer's first reads only (on_write); where the option does
// not exist, nothing. libcurl does not say which socket a transfer reads from while it runs
// (CURLINFO_ACTIVESOCKET names it only once it is done), so it is found among the handle's sockets by the
// connection's two ports, once per request.
void EasyRequest::acknowledge_now() noexcept {
#ifdef TCP_QUICKACK
  if (!receiving_looked_up_) {
    receiving_looked_up_ = true;
    long local_port = 0;
    long peer_port = 0;
    if (curl_easy_getinfo(handle_.get(), CURLINFO_LOCAL_PORT, &local_port) != CURLE_OK ||
        curl_easy_getinfo(handle_.get(), CURLINFO_PRIMARY_PORT, &peer_port) != CURLE_OK || local_port <= 0) {
      return;
    }
    for (OpenSocket& open : sockets_) {
      if (open.local_port == 0) std::tie(open.local_port, open.peer_port) = ports_of(open.socket);
      if (open.local_port == local_port && open.peer_port == peer_port) {
        receiving_ = open.socket;
        break;
      }
    }
  }
  if (receiving_ == CURL_SOCKET_BAD) return;
  const int on = 1;
  static_cast<void>(::setsockopt(receiving_, IPPROTO_TCP, TCP_QUICKACK, &on, sizeof on));  // a hint: may fail
#endif
}

int EasyRequest::on_socket_opened(void* self, curl_socket_t socket, curlsocktype purpose) noexcept {
  if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKOPT_OK;
  try {
    static_cast<EasyRequest*>(self)->sockets_.push_back({socket});
  } catch (...) {  // out of memory: the socket is only not acknowledged early
  }
  return CURL_SOCKOPT_OK;
}

int EasyRequest::on_socket_closing(void* self, curl_socket_t socket) noexcept {
  auto* request = static_cast<EasyRequest*>(self);
  std::erase_if(request->sockets_, [socket](const OpenSocket& open) { return open.socket == socket; });
  if (request->receiving_ == socket) request->receiving_ = CURL_SOCKET_BAD;
  return ::close(socket) == 0 ? 0 : 1;
}

}  // namespace hfget::http
