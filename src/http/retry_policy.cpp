// SPDX-License-Identifier: MIT
#include "http/retry_policy.hpp"

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
