// SPDX-License-Identifier: MIT
// The range answer's meaning decided in one place, apart from the fetch loop that acts on it, so every case
// is a row of a table test. A 206 must continue exactly where the connection stands; a body that ends
// early is a dropped connection, not a success; a redirect target that refuses its URL (an expired
// signature) sends the connection back to the endpoint, which granted access, so that is never "access
// denied"; 416 is retried as a blip (the range was computed from the listing, which the endpoint vouched
// for) and ends as a network failure.
#include "http/range_answer.hpp"

#include <fmt/format.h>

namespace hfget::http {

std::string describe(TransportFailure failure, const std::string& failure_message, long status) {
  switch (failure) {
    case TransportFailure::kNone: return fmt::format("HTTP {}", status);
    case TransportFailure::kTimeout: return "timed out or stalled: " + failure_message;
    case TransportFailure::kConnect: return "cannot connect: " + failure_message;
    case TransportFailure::kConnectionLost: return "connection lost: " + failure_message;
    case TransportFailure::kTls: return "TLS error: " + failure_message;
    case TransportFailure::kMalformedAnswer: return failure_message;
    case TransportFailure::kStoppedBySink: return "transfer stopped";
    case TransportFailure::kCancelled: return "interrupted";
    case TransportFailure::kOther: return failure_message;
  }
  return failure_message;
}

RangeClassification classify_range_answer(const RangeAnswer& answer) {
  if (answer.file_changed) return {RangeVerdict::kFileChanged, {}, "the file changed on the server", false};
  // A sink that stopped the transfer (the range's end was reached, or a split lowered it) still had an answer.
  const bool answered = answer.failure == TransportFailure::kNone || answer.failure == TransportFailure::kStoppedBySink;
  const bool success = answered && answer.status >= 200 && answer.status < 300 && !answer.rejection;
  if (success && answer.position >= answer.range_end) return {RangeVerdict::kComplete, {}, "", false};

  RangeClassification result{RangeVerdict::kRetry, Attempt{answer.failure, answer.status},
                             describe(answer.failure, answer.failure_message, answer.status), false};
  const long status = answer.status;
  if (answer.rejection) {
    result.reason = *answer.rejection;
    result.attempt = {TransportFailure::kOther, 0};
  } else if (success) {
    result.reason = fmt::format("the body ended at byte {} of {}", answer.position, answer.file_size);
    result.attempt = {TransportFailure::kConnectionLost, 0};
  } else if (answered && !answer.to_the_endpoint &&
             (status == 401 || status == 403 || status == 404 || status == 410)) {
    // Whether the URL was shared or fresh from this very redirect: the endpoint granted access.
    result.verdict = RangeVerdict::kResolveAgain;
    result.reason = fmt::format("the CDN refused the signed URL (HTTP {}); resolving it again", status);
    result.attempt = {TransportFailure::kOther, 0};
    result.refusal = true;
  } else if (answered && status == 416) {
    result.reason = "the server cannot serve the range (HTTP 416)";
    result.attempt = {TransportFailure::kOther, 0};
  } else if (answered && next_step(result.attempt) == NextStep::kGiveUp) {
    result.verdict = RangeVerdict::kGiveUp;
  }
  // A CDN that limits connections per file answers 429 to the extra ones.
  if (answered && status == 429) result.refusal = true;
  // Load shed by the CDN, not an expired signature (kResolveAgain: the next URL works) nor the Hub's API
  // quota (its own wait, shared by every connection): those say nothing of how many connections the CDN takes.
  const bool shed_by_the_cdn = answered && !answer.to_the_endpoint && (status == 429 || status == 503);
  result.push_back = shed_by_the_cdn || result.attempt.failure == TransportFailure::kConnectionLost;
  return result;
}

}  // namespace hfget::http
