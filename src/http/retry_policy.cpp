// SPDX-License-Identifier: MIT
#include "http/retry_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace hfget::http {
namespace {

constexpr std::chrono::milliseconds kMaxBackoff{30'000};
// Above this, an attempt is progress however the rate rule is set: a 64 KiB piece of a file is worth
// keeping, and no hostile drip delivers it quickly without also delivering the file.
constexpr std::uint64_t kMaxProgressThreshold = 64 * 1024;

}  // namespace

NextStep next_step(const Attempt& attempt) {
  // A minute of retries against a closed port or an unknown host only hides a typo in HF_ENDPOINT or a
  // proxy setting; once the server has answered, the same failure is an outage worth waiting out.
  if (attempt.first_contact && attempt.failure == TransportFailure::kConnect) return NextStep::kGiveUp;
  switch (attempt.failure) {
    case TransportFailure::kConnect:
    case TransportFailure::kTimeout:
    case TransportFailure::kConnectionLost:
    case TransportFailure::kMalformedAnswer:
    case TransportFailure::kOther: return NextStep::kRetry;
    case TransportFailure::kTls:
    case TransportFailure::kCancelled:
    case TransportFailure::kStoppedBySink: return NextStep::kGiveUp;
    case TransportFailure::kNone: break;
  }
  const long status = attempt.http_status;
  if (status == 408 || status == 429 || (status >= 500 && status <= 599)) return NextStep::kRetry;
  return NextStep::kGiveUp;
}

std::optional<std::chrono::seconds> parse_retry_after(std::string_view value) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty() || value.size() > 10) return std::nullopt;
  long long seconds = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (error != std::errc() || end != value.data() + value.size() || seconds < 0) return std::nullopt;
  return std::min(std::chrono::seconds(seconds), kMaxRetryAfter);
}

std::optional<std::chrono::seconds> parse_rate_limit_reset(std::string_view value) {
  // `"name";r=<remaining>;t=<seconds>`: parameters separated by ';', in any order; the quoted name first.
  std::optional<long long> remaining;
  std::optional<long long> reset;
  while (!value.empty()) {
    const std::size_t end = std::min(value.find(';'), value.size());
    std::string_view item = value.substr(0, end);
    value.remove_prefix(end == value.size() ? end : end + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.size() < 3 || item[1] != '=' || (item[0] != 'r' && item[0] != 't') || item.size() > 12) continue;
    long long number = 0;
    const std::string_view digits = item.substr(2);
    const auto [last, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
    if (error != std::errc() || last != digits.data() + digits.size() || number < 0) return std::nullopt;
    (item[0] == 'r' ? remaining : reset) = number;
  }
  if (!remaining || !reset || *remaining != 0) return std::nullopt;
  return std::min(std::chrono::seconds(*reset), kMaxRetryAfter);
}

std::optional<RequestedWait> requested_wait(const HttpResponse& response) {
  if (response.status == 429) {
    if (const std::string* rate_limit = response.header("ratelimit")) {
      if (const std::optional<std::chrono::seconds> reset = parse_rate_limit_reset(*rate_limit)) {
        const std::chrono::seconds wait = std::min(*reset + std::chrono::seconds(1), kMaxRetryAfter);
        return RequestedWait{
            wait, fmt::format("rate limited: the quota resets in {}s (RateLimit header)", reset->count()), true};
      }
    }
  }
  if (const std::string* retry_after = response.header("retry-after")) {
    if (const std::optional<std::chrono::seconds> wait = parse_retry_after(*retry_after)) {
      return RequestedWait{*wait, fmt::format("{}the server asks to wait {}s (Retry-After)",
                                              response.status == 429 ? "rate limited: " : "", wait->count())};
    }
  }
  return std::nullopt;
}

std::chrono::milliseconds backoff_delay(int attempt_number, std::chrono::milliseconds base,
                                        std::optional<std::chrono::seconds> retry_after, double unit_random) {
  const int doublings = std::clamp(attempt_number - 1, 0, 20);
  const auto ceiling = std::min(kMaxBackoff, base * (std::int64_t{1} << doublings));
  const auto jittered = std::chrono::milliseconds(
      static_cast<std::int64_t>(static_cast<double>(ceiling.count()) * std::clamp(unit_random, 0.0, 1.0)));
  if (retry_after) return std::max<std::chrono::milliseconds>(jittered, *retry_after);
  return jittered;
}

std::uint64_t progress_threshold(std::uint64_t bytes_per_second, std::chrono::seconds stall_window) {
  const auto window = static_cast<std::uint64_t>(std::max<std::int64_t>(stall_window.count(), 1));
  // Compared before multiplying: a huge --speed-limit must not wrap around to a tiny threshold.
  if (bytes_per_second >= kMaxProgressThreshold) return kMaxProgressThreshold;
  return std::clamp<std::uint64_t>(bytes_per_second * window, 1, kMaxProgressThreshold);
}

bool retry_fits(std::chrono::milliseconds waited, std::chrono::milliseconds delay, std::chrono::seconds max_time) {
  if (max_time.count() <= 0) return true;
  return waited + delay <= max_time;
}

}  // namespace hfget::http
