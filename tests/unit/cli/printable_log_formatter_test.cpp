// SPDX-License-Identifier: MIT
#include "cli/printable_log_formatter.hpp"

#include <gtest/gtest.h>
#include <spdlog/details/log_msg.h>

#include <string>

#include "util/secrets.hpp"

namespace hfget::cli {

TEST(PrintableLogFormatter, EscapesControlsAndRedactsSecretsInEveryLine) {
  util::register_secret("hf_FormatterTestSecret_77");
  PrintableLogFormatter formatter("%l %v");
  const std::string payload = "GET http://hub/x?echo=hf_FormatterTestSecret_77 -> \x1b]0;pwned\x07\nfake line";
  const spdlog::details::log_msg message(spdlog::source_loc{}, "test", spdlog::level::warn, payload);
  spdlog::memory_buf_t out;
  formatter.format(message, out);
  EXPECT_EQ(std::string(out.data(), out.size()),
            "warning GET http://hub/x?echo=*** -> \\x1b]0;pwned\\x07\\x0afake line\n");
  // Clones behave the same (spdlog clones a formatter per sink).
  spdlog::memory_buf_t cloned;
  formatter.clone()->format(message, cloned);
  EXPECT_EQ(std::string(cloned.data(), cloned.size()), std::string(out.data(), out.size()));
}

}  // namespace hfget::cli
