// SPDX-License-Identifier: MIT
#pragma once

#include <spdlog/formatter.h>
#include <spdlog/pattern_formatter.h>

#include <memory>
#include <string>

namespace hfget::cli {

/// spdlog's pattern formatter, applied to a message first made printable and redacted of secrets
/// (util/printable.hpp, util/secrets.hpp). Every sink hfget logs to uses one, so that no log line, on the
/// terminal or in --log-file, carries a control sequence or a token, whoever composed the message.
class PrintableLogFormatter final : public spdlog::formatter {
 public:
  explicit PrintableLogFormatter(std::string pattern);

  void format(const spdlog::details::log_msg& message, spdlog::memory_buf_t& destination) override;
  std::unique_ptr<spdlog::formatter> clone() const override;

 private:
  std::string pattern_;
  std::unique_ptr<spdlog::pattern_formatter> inner_;
};

/// The payload of a log message as it may be shown: printable and redacted.
std::string printable_payload(const spdlog::details::log_msg& message);

}  // namespace hfget::cli
