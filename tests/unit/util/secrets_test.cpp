// SPDX-License-Identifier: MIT
#include "util/secrets.hpp"

#include <gtest/gtest.h>

#include "hfget/error.hpp"

namespace hfget::util {

TEST(Secrets, RedactsEveryOccurrenceOfARegisteredSecret) {
  register_secret("hf_UnitTestSecret_0123456789");
  EXPECT_EQ(redact_secrets("GET /x?echo=hf_UnitTestSecret_0123456789&t=hf_UnitTestSecret_0123456789 -> 500"),
            "GET /x?echo=***&t=*** -> 500");
  EXPECT_EQ(redact_secrets("nothing to hide"), "nothing to hide");
}

TEST(Secrets, IgnoresValuesTooShortToBeCredentials) {
  register_secret("abc");
  EXPECT_EQ(redact_secrets("abcdef"), "abcdef");
}

TEST(Secrets, ErrorMessagesNeverCarryARegisteredSecret) {
  register_secret("hf_EchoedBackByTheServer_42");
  const Error error(ErrorCode::kAccessDenied, "server: Bearer hf_EchoedBackByTheServer_42 is invalid");
  EXPECT_STREQ(error.what(), "server: Bearer *** is invalid");
}

}  // namespace hfget::util
