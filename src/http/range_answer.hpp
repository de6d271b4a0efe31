// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "http/retry_policy.hpp"
#include "http/transport.hpp"

namespace hfget::http {

/// What the connection that got an answer to a ranged GET of a file does next.
enum class RangeVerdict {
  kComplete,      // the range is written
  kFileChanged,   // another ETag: nothing of the answer was written; the file starts over
  kRetry,         // ask again from where the connection stands, if the retry policy allows
  kResolveAgain,  // a host the endpoint redirected to refused the URL: ask the endpoint for a new one, then retry
  kGiveUp,        // the endpoint's own refusal (a 4xx): retrying would fail the same way
};

/// One answer to a ranged GET, as the connection saw it: the transport's result and what its body sink
/// made of the body.
struct RangeAnswer {
  TransportFailure failure = TransportFailure::kNone;
  std::string failure_message;
  long status = 0;
  bool to_the_endpoint = false;          // sent to the endpoint's origin (the Hub), not to a host it redirected to
  bool file_changed = false;             // the sink saw another ETag than the one the file's bytes were recorded with
  std::optional<std::string> rejection;  // why the sink refused the body (a 206 that does not continue the file)
  std::uint64_t position = 0;            // where the connection stands after the answer
  std::uint64_t range_end = 0;           // the end of its range (exclusive)
  std::uint64_t file_size = 0;
};

struct RangeClassification {
  RangeVerdict verdict = RangeVerdict::kRetry;
  Attempt attempt;       // what the retry policy is shown for kRetry and kResolveAgain
  std::string reason;    // in words, for the retry line and the final error
  bool refusal = false;  // the CDN refused a connection (429, a refused URL): the file may use fewer at once
  // The CDN or the path shed load: a 429 or 503 from the CDN, a connection reset or a body cut short. The
  // connection controller gives connections back for it (a timeout is not one: a slow link is not a push).
  bool push_back = false;
};

/// Sorts the answer: 2xx that ends the range, another ETag, a rejected or short body, a refused signed
/// URL (401/403/404/410 from a redirect target), 416, the endpoint's own 4xx, and what the retry policy
/// decides (5xx, 429, dropped connections). Pure: no request, no clock, no file.
RangeClassification classify_range_answer(const RangeAnswer& answer);

/// A transport result in words: "HTTP 503", "connection lost: …".
std::string describe(TransportFailure failure, const std::string& failure_message, long status);

}  // namespace hfget::http
