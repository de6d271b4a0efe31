// SPDX-License-Identifier: MIT
#include "http/range_answer.hpp"

#include <gtest/gtest.h>

#include <string>

namespace hfget::http {
namespace {

constexpr std::uint64_t kSize = 1000;

RangeAnswer answer(long status, std::uint64_t position = 0, bool to_the_endpoint = false) {
  RangeAnswer result;
  result.status = status;
  result.position = position;
  result.range_end = kSize;
  result.file_size = kSize;
  result.to_the_endpoint = to_the_endpoint;
  return result;
}

RangeAnswer failed(TransportFailure failure, std::uint64_t position = 0) {
  RangeAnswer result = answer(0, position);
  result.failure = failure;
  result.failure_message = "reset by peer";
  return result;
}

TEST(ClassifyRangeAnswer, SortsEveryKindOfAnswer) {
  RangeAnswer changed = answer(200, 0);
  changed.file_changed = true;
  RangeAnswer rejected = answer(206, 0);
  rejected.rejection = "Content-Range 'bytes 5-9/1000' does not continue the file at byte 0 of 1000";
  RangeAnswer range_reached = answer(206, kSize);
  range_reached.failure = TransportFailure::kStoppedBySink;  // the sink stopped at the range's end

  const struct {
    const char* name;
    RangeAnswer answer;
    RangeVerdict verdict;
    Attempt attempt;  // compared for kRetry and kResolveAgain
    std::string reason;
    bool refusal;
  } cases[] = {
      {"206 to the end", answer(206, kSize), RangeVerdict::kComplete, {}, "", false},
      {"200 to the end", answer(200, kSize), RangeVerdict::kComplete, {}, "", false},
      {"the sink stopped at the end", range_reached, RangeVerdict::kComplete, {}, "", false},
      {"another ETag", changed, RangeVerdict::kFileChanged, {}, "the file changed on the server", false},
      {"a 206 that does not continue",
       rejected,
       RangeVerdict::kRetry,
       {TransportFailure::kOther, 0},
       *rejected.rejection,
       false},
      {"a short body",
       answer(206, 300),
       RangeVerdict::kRetry,
       {TransportFailure::kConnectionLost, 0},
       "the body ended at byte 300 of 1000",
       false},
      {"a dropped connection",
       failed(TransportFailure::kConnectionLost, 300),
       RangeVerdict::kRetry,
       {TransportFailure::kConnectionLost, 0},
       "connection lost: reset by peer",
       false},
      {"the CDN's 403",
       answer(403),
       RangeVerdict::kResolveAgain,
       {TransportFailure::kOther, 0},
       "the CDN refused the signed URL (HTTP 403); resolving it again",
       true},
      {"the CDN's 401",
       answer(401),
       RangeVerdict::kResolveAgain,
       {TransportFailure::kOther, 0},
       "the CDN refused the signed URL (HTTP 401); resolving it again",
       true},
      {"the CDN's 404",
       answer(404),
       RangeVerdict::kResolveAgain,
       {TransportFailure::kOther, 0},
       "the CDN refused the signed URL (HTTP 404); resolving it again",
       true},
      {"the CDN's 410",
       answer(410),
       RangeVerdict::kResolveAgain,
       {TransportFailure::kOther, 0},
       "the CDN refused the signed URL (HTTP 410); resolving it again",
       true},
      {"the Hub's 403", answer(403, 0, true), RangeVerdict::kGiveUp, {}, "HTTP 403", false},
      {"the Hub's 404", answer(404, 0, true), RangeVerdict::kGiveUp, {}, "HTTP 404", false},
      {"the CDN's 400", answer(400), RangeVerdict::kGiveUp, {}, "HTTP 400", false},
      {"416",
       answer(416),
       RangeVerdict::kRetry,
       {TransportFailure::kOther, 0},
       "the server cannot serve the range (HTTP 416)",
       false},
      {"416 from the Hub",
       answer(416, 0, true),
       RangeVerdict::kRetry,
       {TransportFailure::kOther, 0},
       "the server cannot serve the range (HTTP 416)",
       false},
      {"the CDN's 429", answer(429), RangeVerdict::kRetry, {TransportFailure::kNone, 429}, "HTTP 429", true},
      {"the Hub's 429", answer(429, 0, true), RangeVerdict::kRetry, {TransportFailure::kNone, 429}, "HTTP 429", true},
      {"500", answer(500), RangeVerdict::kRetry, {TransportFailure::kNone, 500}, "HTTP 500", false},
      {"503 from the Hub",
       answer(503, 0, true),
       RangeVerdict::kRetry,
       {TransportFailure::kNone, 503},
       "HTTP 503",
       false},
      {"a TLS failure (the retry policy gives up)",
       failed(TransportFailure::kTls),
       RangeVerdict::kRetry,
       {TransportFailure::kTls, 0},
       "TLS error: reset by peer",
       false},
  };
  for (const auto& row : cases) {
    SCOPED_TRACE(row.name);
    const RangeClassification result = classify_range_answer(row.answer);
    EXPECT_EQ(result.verdict, row.verdict);
    EXPECT_EQ(result.reason, row.reason);
    EXPECT_EQ(result.refusal, row.refusal);
    if (row.verdict == RangeVerdict::kRetry || row.verdict == RangeVerdict::kResolveAgain) {
      EXPECT_EQ(result.attempt.failure, row.attempt.failure);
      EXPECT_EQ(result.attempt.http_status, row.attempt.http_status);
    }
  }
}

TEST(ClassifyRangeAnswer, LoadSheddingIsAPushBackAndASlowLinkIsNot) {
  RangeAnswer expired = answer(403);
  const struct {
    const char* name;
    RangeAnswer answer;
    bool push_back;
  } cases[] = {
      {"the CDN's 429", answer(429), true},
      {"a 503", answer(503), true},
      {"the Hub's 503: its own wait", answer(503, 0, true), false},
      {"the Hub's 429: its quota", answer(429, 0, true), false},
      {"an expired signed URL: resolved again", expired, false},
      {"a reset connection", failed(TransportFailure::kConnectionLost, 300), true},
      {"a body cut short", answer(206, 300), true},
      {"a 500", answer(500), false},
      {"a stall", failed(TransportFailure::kTimeout, 300), false},
      {"a complete range", answer(206, kSize), false},
  };
  for (const auto& row : cases) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(classify_range_answer(row.answer).push_back, row.push_back);
  }
}

TEST(ClassifyRangeAnswer, AShortBodyThatAFailureEndedIsThatFailure) {
  const RangeClassification result = classify_range_answer(failed(TransportFailure::kTimeout, 300));
  EXPECT_EQ(result.verdict, RangeVerdict::kRetry);
  EXPECT_EQ(result.attempt.failure, TransportFailure::kTimeout);
  EXPECT_EQ(result.reason, "timed out or stalled: reset by peer");
}

}  // namespace
}  // namespace hfget::http
