// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "http/easy_request.hpp"

namespace hfget::http {

enum class NextStep { kRetry, kGiveUp };

/// What a failed attempt looked like, as far as retrying is concerned.
struct Attempt {
  TransportFailure failure = TransportFailure::kNone;
  long http_status = 0;
};

/// Transient failures are retried: connection problems, timeouts and stalls, 408, 429 and 5xx.
/// Anything that would fail the same way again (4xx, TLS, cancellation) is not.
NextStep next_step(const Attempt& attempt);

/// Seconds from a Retry-After header: delay-seconds only (HTTP-dates are rare on the Hub and CDNs);
/// capped so a hostile server cannot park us for a day.
std::optional<std::chrono::seconds> parse_retry_after(std::string_view header_value);

/// Exponential backoff with full jitter: a uniform draw in [0, min(cap, base * 2^(attempt-1))], but never less
/// than the server's Retry-After. `unit_random` is a draw in [0, 1).
std::chrono::milliseconds backoff_delay(int attempt_number, std::chrono::milliseconds base,
                                        std::optional<std::chrono::seconds> retry_after, double unit_random);

}  // namespace hfget::http
