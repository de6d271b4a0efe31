// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "http/easy_request.hpp"

namespace hfget::http {

enum class NextStep { kRetry, kGiveUp };

/// What a failed attempt looked like, as far as retrying is concerned.
struct Attempt {
  TransportFailure failure = TransportFailure::kNone;
  long http_status = 0;
  // Nothing has answered yet on this server in this run: a refused connection or a name that does not
  // resolve is then a wrong endpoint or proxy, not a blip.
  bool first_contact = false;
};

/// Transient failures are retried: connection problems, timeouts and stalls, 408, 429 and 5xx.
/// Anything that would fail the same way again (4xx, TLS, cancellation) is not, and neither is a failure to
/// connect or resolve on first contact.
NextStep next_step(const Attempt& attempt);

/// The longest single wait a Retry-After can ask for. The Hub's rate limits count over 5-minute windows:
/// waits of a minute, retried, still get through one within the default --retries and --retry-max-time,
/// while a hostile server can no longer park a request for 5 minutes per attempt.
inline constexpr std::chrono::seconds kMaxRetryAfter{60};

/// Seconds from a Retry-After header: delay-seconds only (HTTP-dates are rare on the Hub and CDNs);
/// capped at kMaxRetryAfter.
std::optional<std::chrono::seconds> parse_retry_after(std::string_view header_value);

/// The seconds until the quota resets, from a `RateLimit` header (IETF draft, as the Hub sends it:
/// `"api";r=0;t=55`), when it says no request is left (r=0); nullopt otherwise or when it does not parse.
/// Capped at kMaxRetryAfter.
std::optional<std::chrono::seconds> parse_rate_limit_reset(std::string_view header_value);

/// The wait a server asked for before the next attempt, and why, in words for the retry line.
struct RequestedWait {
  std::chrono::seconds wait{0};
  std::string why;             // "rate limited: the quota resets in 55s (RateLimit header)"
  bool quota_used_up = false;  // a RateLimit header said so: it holds for the client's other requests too
};
/// For a 429 whose RateLimit header says the quota is used up: its reset time plus one second (the window
/// may not have turned yet when the clocks differ; huggingface_hub adds the same second); else an integer
/// Retry-After, on any status. Both capped at kMaxRetryAfter.
std::optional<RequestedWait> requested_wait(const HttpResponse& response);

/// Exponential backoff with full jitter: a uniform draw in [0, min(cap, base * 2^(attempt-1))], but never less
/// than the server's Retry-After. `unit_random` is a draw in [0, 1).
std::chrono::milliseconds backoff_delay(int attempt_number, std::chrono::milliseconds base,
                                        std::optional<std::chrono::seconds> retry_after, double unit_random);

/// The bytes an attempt must move to count as progress (which gives the file its retries and its
/// --retry-max-time back): what a transfer at the minimum rate moves in one stall window, at most 64 KiB and
/// at least 1 byte (`bytes_per_second` 0 turns the rate rule off). A server that sends a byte and then
/// stalls, again and again, so uses up --retries instead of being retried for ever.
std::uint64_t progress_threshold(std::uint64_t bytes_per_second, std::chrono::seconds stall_window);

/// Whether a retry after `delay` still starts within `max_time` of the last progress (`waited` ago).
/// A zero max_time means no limit.
bool retry_fits(std::chrono::milliseconds waited, std::chrono::milliseconds delay, std::chrono::seconds max_time);

}  // namespace hfget::http
