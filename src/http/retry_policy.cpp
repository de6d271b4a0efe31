// SPDX-License-Identifier: MIT
#include "http/retry_policy.hpp"

#include <algorithm>
#include <charconv>

namespace hfget::http {
namespace {

constexpr std::chrono::seconds kMaxRetryAfter{300};
constexpr std::chrono::milliseconds kMaxBackoff{30'000};

}  // namespace

NextStep next_step(const Attempt& attempt) {
  switch (attempt.failure) {
    case TransportFailure::kConnect:
    case TransportFailure::kTimeout:
    case TransportFailure::kConnectionLost:
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

std::chrono::milliseconds backoff_delay(int attempt_number, std::chrono::milliseconds base,
                                        std::optional<std::chrono::seconds> retry_after, double unit_random) {
  const int doublings = std::clamp(attempt_number - 1, 0, 20);
  const auto ceiling = std::min(kMaxBackoff, base * (std::int64_t{1} << doublings));
  const auto jittered = std::chrono::milliseconds(
      static_cast<std::int64_t>(static_cast<double>(ceiling.count()) * std::clamp(unit_random, 0.0, 1.0)));
  if (retry_after) return std::max<std::chrono::milliseconds>(jittered, *retry_after);
  return jittered;
}

}  // namespace hfget::http
