// SPDX-License-Identifier: MIT
#include "http/content_range.hpp"

#include <gtest/gtest.h>

namespace hfget::http {
namespace {

TEST(ParseContentRange, ReadsFirstLastAndCompleteLength) {
  const std::optional<ContentRange> range = parse_content_range("bytes 100-199/1000");
  ASSERT_TRUE(range);
  EXPECT_EQ(range->first, 100U);
  EXPECT_EQ(range->last, 199U);
  EXPECT_EQ(range->complete_length, 1000U);
}

TEST(ParseContentRange, AcceptsASingleByteAndTheLastByte) {
  ASSERT_TRUE(parse_content_range("bytes 0-0/1"));
  const std::optional<ContentRange> last = parse_content_range("bytes 999-999/1000");
  ASSERT_TRUE(last);
  EXPECT_EQ(last->first, 999U);
}

TEST(ParseContentRange, RejectsUnknownCompleteLength) {
  EXPECT_FALSE(parse_content_range("bytes 100-199/*"));
}

TEST(ParseContentRange, RejectsMalformedValues) {
  for (const char* value : {
           "",
           "bytes",
           "bytes ",
           "bytes */1000",  // unsatisfied-range form (416)
           "items 0-1/2",   // other unit
           "bytes 0-1",     // no complete length
           "bytes 0/1-2",   // '/' before '-'
           "bytes -1-2/3",  // negative
           "bytes 1--2/3",
           "bytes 0-1/2x",  // trailing junk
           "bytes 0x1-2/3",
           "bytes a-b/c",
           "bytes 0-99999999999999999999/100000000000000000000",  // overflow
           "bytes 200-100/1000",                                  // first after last
           "bytes 0-1000/1000",                                   // last past the end
           "bytes 0-0/0",
       }) {
    EXPECT_FALSE(parse_content_range(value)) << '"' << value << '"';
  }
}

TEST(ContinuesPartialFile, AcceptsTheExactContinuation) {
  EXPECT_TRUE(continues_partial_file({500, 999, 1000}, 500, 1000));
  EXPECT_TRUE(continues_partial_file({0, 999, 1000}, 0, 1000));
}

TEST(ContinuesPartialFile, AcceptsAContinuationThatStopsShortOfTheEnd) {
  // A server may send less than asked for; the fetcher then resumes again from where it stopped.
  EXPECT_TRUE(continues_partial_file({500, 700, 1000}, 500, 1000));
}

TEST(ContinuesPartialFile, RejectsRangeStartingBeforeOffset) {
  EXPECT_FALSE(continues_partial_file({400, 999, 1000}, 500, 1000));
}

TEST(ContinuesPartialFile, RejectsRangeStartingAfterOffset) {
  EXPECT_FALSE(continues_partial_file({600, 999, 1000}, 500, 1000));
}

TEST(ContinuesPartialFile, RejectsAnotherCompleteLength) {
  EXPECT_FALSE(continues_partial_file({500, 1499, 1500}, 500, 1000));
  EXPECT_FALSE(continues_partial_file({500, 899, 900}, 500, 1000));
}

TEST(ContinuesPartialFile, RejectsWhatTheParserRejects) {
  const std::optional<ContentRange> unknown_length = parse_content_range("bytes 500-999/*");
  EXPECT_FALSE(unknown_length && continues_partial_file(*unknown_length, 500, 1000));
  const std::optional<ContentRange> malformed = parse_content_range("bytes 500-/1000");
  EXPECT_FALSE(malformed && continues_partial_file(*malformed, 500, 1000));
}

}  // namespace
}  // namespace hfget::http
