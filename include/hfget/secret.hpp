// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace hfget {

namespace detail {
/// Adds a credential to the set every printed or logged message is redacted of (src/util/secrets.hpp).
void remember_secret(std::string_view secret);
}  // namespace detail

/// A token. There is no operator<<, no fmt::formatter and no implicit conversion, so it cannot reach a log
/// line or an error message by accident. The one code path that sends it calls reveal(). Constructing one
/// registers it for redaction, so that a server echoing it back cannot make hfget print it either.
class Secret {
 public:
  Secret() = default;
  explicit Secret(std::string value) : value_(std::move(value)) { detail::remember_secret(value_); }
  const std::string& reveal() const noexcept { return value_; }
  bool empty() const noexcept { return value_.empty(); }

 private:
  std::string value_;
};

}  // namespace hfget
