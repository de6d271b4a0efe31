// SPDX-License-Identifier: MIT
#include "http/retry_policy.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

namespace hfget::http {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const char* name_of(TransportFailure failure) {
  switch (failure) {
    case TransportFailure::kNone: return "kNone";
    case TransportFailure::kConnect: return "kConnect";
    case TransportFailure::kTimeout: return "kTimeout";
    case TransportFailure::kConnectionLost: return "kConnectionLost";
    case TransportFailure::kMalformedAnswer: return "kMalformedAnswer";
    case TransportFailure::kTls: return "kTls";
    case TransportFailure::kStoppedBySink: return "kStoppedBySink";
    case TransportFailure::kCancelled: return "kCancelled";
    case TransportFailure::kOther: return "kOther";
  }
  return "?";
}

TEST(NextStep, RetriesOnlyTransientFailures) {
  const struct {
    TransportFailure failure;
    long status;
    NextStep expected;
  } cases[] = {
      // An answer arrived: the status decides.
      {TransportFailure::kNone, 408, NextStep::kRetry},
      {TransportFailure::kNone, 429, NextStep::kRetry},
      {TransportFailure::kNone, 500, NextStep::kRetry},
      {TransportFailure::kNone, 502, NextStep::kRetry},
      {TransportFailure::kNone, 503, NextStep::kRetry},
      {TransportFailure::kNone, 504, NextStep::kRetry},
      {TransportFailure::kNone, 599, NextStep::kRetry},
      {TransportFailure::kNone, 400, NextStep::kGiveUp},
      {TransportFailure::kNone, 401, NextStep::kGiveUp},
      {TransportFailure::kNone, 403, NextStep::kGiveUp},
      {TransportFailure::kNone, 404, NextStep::kGiveUp},
      {TransportFailure::kNone, 416, NextStep::kGiveUp},
      {TransportFailure::kNone, 600, NextStep::kGiveUp},
      {TransportFailure::kNone, 0, NextStep::kGiveUp},
      // No answer: the transport failure decides, whatever status a previous response left behind.
      {TransportFailure::kConnect, 0, NextStep::kRetry},
      {TransportFailure::kTimeout, 0, NextStep::kRetry},
      {TransportFailure::kConnectionLost, 0, NextStep::kRetry},
      {TransportFailure::kConnectionLost, 200, NextStep::kRetry},
      {TransportFailure::kConnectionLost, 206, NextStep::kRetry},
      {TransportFailure::kOther, 0, NextStep::kRetry},
      {TransportFailure::kMalformedAnswer, 200, NextStep::kRetry},
      {TransportFailure::kTimeout, 404, NextStep::kRetry},
      {TransportFailure::kTls, 0, NextStep::kGiveUp},
      {TransportFailure::kTls, 503, NextStep::kGiveUp},
      {TransportFailure::kCancelled, 0, NextStep::kGiveUp},
      {TransportFailure::kCancelled, 503, NextStep::kGiveUp},
      {TransportFailure::kStoppedBySink, 200, NextStep::kGiveUp},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << name_of(c.failure) << " / HTTP " << c.status);
    EXPECT_EQ(next_step({c.failure, c.status}), c.expected);
  }
}

TEST(NextStep, GivesUpAtOnceWhenTheFirstContactCannotConnect) {
  const struct {
    TransportFailure failure;
    long status;
    bool first_contact;
    NextStep expected;
  } cases[] = {
      // Refused, or the name does not resolve, before anything answered: a wrong endpoint or proxy.
      {TransportFailure::kConnect, 0, true, NextStep::kGiveUp},
      // Once the server answered, the same failure is an outage: retried.
      {TransportFailure::kConnect, 0, false, NextStep::kRetry},
      // A timeout or a dropped connection on first contact may be a slow network: retried.
      {TransportFailure::kTimeout, 0, true, NextStep::kRetry},
      {TransportFailure::kConnectionLost, 0, true, NextStep::kRetry},
      {TransportFailure::kNone, 503, true, NextStep::kRetry},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << name_of(c.failure) << " / HTTP " << c.status << " / first contact "
                                      << c.first_contact);
    EXPECT_EQ(next_step({c.failure, c.status, c.first_contact}), c.expected);
  }
}

TEST(ParseRetryAfter, ReadsDelaySeconds) {
  EXPECT_EQ(parse_retry_after("0"), seconds(0));
  EXPECT_EQ(parse_retry_after("45"), seconds(45));
  EXPECT_EQ(parse_retry_after("  7 "), seconds(7));
}

// Five minutes per attempt let one request wait about 40 minutes with the default --retries.
TEST(ParseRetryAfter, CapsHostileValuesAtOneMinute) {
  EXPECT_EQ(kMaxRetryAfter, seconds(60));
  EXPECT_EQ(parse_retry_after("60"), seconds(60));
  EXPECT_EQ(parse_retry_after("61"), seconds(60));
  EXPECT_EQ(parse_retry_after("300"), seconds(60));
  EXPECT_EQ(parse_retry_after("86400"), seconds(60));
  EXPECT_EQ(parse_retry_after("9999999999"), seconds(60));
}

TEST(ParseRetryAfter, IgnoresJunkNegativesAndHttpDates) {
  for (const char* value :
       {"", "   ", "-1", "+5", "1.5", "5s", "soon", "0x10", "99999999999", "Wed, 21 Oct 2015 07:28:00 GMT"}) {
    EXPECT_EQ(parse_retry_after(value), std::nullopt) << '"' << value << '"';
  }
}

TEST(BackoffDelay, IsAFractionOfTheExponentialCeiling) {
  const milliseconds base(1000);
  EXPECT_EQ(backoff_delay(1, base, std::nullopt, 0.0), milliseconds(0));
  EXPECT_EQ(backoff_delay(1, base, std::nullopt, 0.5), milliseconds(500));
  EXPECT_EQ(backoff_delay(2, base, std::nullopt, 0.5), milliseconds(1000));
  EXPECT_EQ(backoff_delay(3, base, std::nullopt, 0.5), milliseconds(2000));
  EXPECT_EQ(backoff_delay(4, base, std::nullopt, 0.999), milliseconds(7992));
}

TEST(BackoffDelay, StaysWithinZeroAndTheCeilingForEveryDraw) {
  const milliseconds base(250);
  for (int attempt = 1; attempt <= 8; ++attempt) {
    const milliseconds ceiling = std::min(milliseconds(30'000), base * (1 << (attempt - 1)));
    for (const double draw : {0.0, 0.1, 0.5, 0.9, 0.999999}) {
      const milliseconds delay = backoff_delay(attempt, base, std::nullopt, draw);
      EXPECT_GE(delay, milliseconds(0)) << attempt << " " << draw;
      EXPECT_LE(delay, ceiling) << attempt << " " << draw;
    }
  }
}

TEST(BackoffDelay, IsCappedAtThirtySeconds) {
  const milliseconds base(1000);
  EXPECT_EQ(backoff_delay(6, base, std::nullopt, 0.999999), milliseconds(29'999));
  EXPECT_EQ(backoff_delay(7, base, std::nullopt, 0.5), milliseconds(15'000));
  EXPECT_EQ(backoff_delay(50, base, std::nullopt, 0.5), milliseconds(15'000));
  EXPECT_EQ(backoff_delay(1'000'000, milliseconds(10'000), std::nullopt, 1.0), milliseconds(30'000));
}

TEST(BackoffDelay, ClampsOutOfRangeDrawsAndAttemptNumbers) {
  const milliseconds base(1000);
  EXPECT_EQ(backoff_delay(1, base, std::nullopt, -3.0), milliseconds(0));
  EXPECT_EQ(backoff_delay(1, base, std::nullopt, 7.0), milliseconds(1000));
  EXPECT_EQ(backoff_delay(0, base, std::nullopt, 0.5), milliseconds(500));
  EXPECT_EQ(backoff_delay(-5, base, std::nullopt, 0.5), milliseconds(500));
}

TEST(BackoffDelay, NeverWaitsLessThanRetryAfter) {
  const milliseconds base(1000);
  EXPECT_EQ(backoff_delay(1, base, seconds(10), 0.0), milliseconds(10'000));
  EXPECT_EQ(backoff_delay(1, base, seconds(10), 0.999), milliseconds(10'000));
  EXPECT_EQ(backoff_delay(1, base, seconds(0), 0.5), milliseconds(500));
}

TEST(BackoffDelay, KeepsALongerJitteredDelayOverAShortRetryAfter) {
  EXPECT_EQ(backoff_delay(5, milliseconds(1000), seconds(2), 0.5), milliseconds(8000));
}

TEST(BackoffDelay, RetryAfterIsNotCappedByTheBackoffCeiling) {
  EXPECT_EQ(backoff_delay(1, milliseconds(1000), seconds(60), 0.5), milliseconds(60'000));
}

TEST(ProgressThreshold, IsWhatTheMinimumRateMovesInOneStallWindow) {
  EXPECT_EQ(progress_threshold(1024, seconds(2)), 2048U);
  EXPECT_EQ(progress_threshold(100, seconds(30)), 3000U);
}

TEST(ProgressThreshold, IsAtMost64KiB) {
  EXPECT_EQ(progress_threshold(1024, seconds(60)), 60U * 1024);  // the defaults
  EXPECT_EQ(progress_threshold(1024, seconds(3600)), 64U * 1024);
  EXPECT_EQ(progress_threshold(100 << 20, seconds(60)), 64U * 1024);
  EXPECT_EQ(progress_threshold(UINT64_MAX, seconds(1'000'000)), 64U * 1024);  // no wrap-around
}

TEST(ProgressThreshold, IsAtLeastOneByte) {
  EXPECT_EQ(progress_threshold(0, seconds(60)), 1U);  // --speed-limit 0: any byte, as before the rate rule
  EXPECT_EQ(progress_threshold(1, seconds(0)), 1U);
}

// A byte before each stall, or a byte a second, is no progress with the defaults.
TEST(ProgressThreshold, ADripIsNoProgress) {
  EXPECT_LT(1U, progress_threshold(1024, seconds(60)));
  EXPECT_LT(60U, progress_threshold(1024, seconds(60)));
}

TEST(RetryFits, OnlyWhenTheRetryStartsWithinTheLimit) {
  EXPECT_TRUE(retry_fits(milliseconds(0), milliseconds(60'000), seconds(60)));
  EXPECT_TRUE(retry_fits(milliseconds(500'000), milliseconds(30'000), seconds(600)));
  EXPECT_FALSE(retry_fits(milliseconds(590'000), milliseconds(30'000), seconds(600)));
  EXPECT_FALSE(retry_fits(milliseconds(601'000), milliseconds(0), seconds(600)));
}

TEST(RetryFits, ZeroMeansNoLimit) {
  EXPECT_TRUE(retry_fits(milliseconds(1'000'000'000), milliseconds(60'000), seconds(0)));
}

TEST(RateLimitHeader, GivesTheResetOnlyWhenNoRequestIsLeft) {
  EXPECT_EQ(parse_rate_limit_reset(R"("api";r=0;t=55)"), seconds(55));
  EXPECT_EQ(parse_rate_limit_reset(R"("resolvers"; t=12; r=0)"), seconds(12));
  EXPECT_EQ(parse_rate_limit_reset(R"("api";r=3;t=55)"), std::nullopt) << "requests are left: no wait";
  EXPECT_EQ(parse_rate_limit_reset(R"("api";r=0)"), std::nullopt);
  EXPECT_EQ(parse_rate_limit_reset(R"("api";r=0;t=-1)"), std::nullopt);
  EXPECT_EQ(parse_rate_limit_reset(R"("api";r=0;t=abc)"), std::nullopt);
  EXPECT_EQ(parse_rate_limit_reset(""), std::nullopt);
  EXPECT_EQ(parse_rate_limit_reset(R"("api";r=0;t=300)"), kMaxRetryAfter) << "a 5-minute window is capped";
}

TEST(RequestedWait, A429WithAUsedUpQuotaWaitsForItsResetAndSaysSo) {
  HttpResponse response;
  response.status = 429;
  response.headers["ratelimit"] = R"("api";r=0;t=7)";
  const std::optional<RequestedWait> wait = requested_wait(response);
  ASSERT_TRUE(wait.has_value());
  EXPECT_EQ(wait->wait, seconds(8)) << "one second more, as huggingface_hub";
  EXPECT_TRUE(wait->quota_used_up);
  EXPECT_NE(wait->why.find("rate limited"), std::string::npos) << wait->why;
  EXPECT_NE(wait->why.find("7s"), std::string::npos) << wait->why;
}

TEST(RequestedWait, RetryAfterOtherwiseAndNothingWithoutHeaders) {
  HttpResponse response;
  response.status = 429;
  response.headers["ratelimit"] = R"("api";r=5;t=7)";
  response.headers["retry-after"] = "3";
  ASSERT_TRUE(requested_wait(response).has_value());
  EXPECT_EQ(requested_wait(response)->wait, seconds(3));
  EXPECT_FALSE(requested_wait(response)->quota_used_up);
  response.headers.erase("retry-after");
  EXPECT_FALSE(requested_wait(response).has_value());
  HttpResponse server_error;
  server_error.status = 503;
  server_error.headers["ratelimit"] = R"("api";r=0;t=7)";
  EXPECT_FALSE(requested_wait(server_error).has_value()) << "RateLimit speaks for a 429 only";
}

}  // namespace
}  // namespace hfget::http
