// SPDX-License-Identifier: MIT
// Log messages are composed all over the library, often from what a server sent (a URL it redirected to,
// a status text). Escaping at each call site would be a rule every new line of code must remember; here
// it is applied once, where a message becomes text.
#include "cli/printable_log_formatter.hpp"

#include "util/printable.hpp"
#include "util/secrets.hpp"

namespace hfget::cli {
namespace {

constexpr std::size_t kMaxLogMessageBytes = 16 * 1024;

}  // namespace

std::string printable_payload(const spdlog::details::log_msg& message) {
  // Redacted before it is cut, so that a cut cannot leave the start of a token behind.
  return util::printable(util::redact_secrets(std::string(message.payload.data(), message.payload.size())),
                         kMaxLogMessageBytes);
}

PrintableLogFormatter::PrintableLogFormatter(std::string pattern)
    : pattern_(std::move(pattern)),
      inner_(std::make_unique<spdlog::pattern_formatter>(pattern_, spdlog::pattern_time_type::utc)) {}

void PrintableLogFormatter::format(const spdlog::details::log_msg& message, spdlog::memory_buf_t& destination) {
  const std::string payload = printable_payload(message);
  spdlog::details::log_msg safe = message;
  safe.payload = spdlog::string_view_t(payload.data(), payload.size());
  inner_->format(safe, destination);
}

std::unique_ptr<spdlog::formatter> PrintableLogFormatter::clone() const {
  return std::make_unique<PrintableLogFormatter>(pattern_);
}

}  // namespace hfget::cli
