// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <utility>

namespace hfget {

/// A token. There is no operator<<, no fmt::formatter and no implicit conversion, so it cannot reach a log
/// line or an error message by accident. The one code path that sends it calls reveal().
class Secret {
 public:
  Secret() = default;
  explicit Secret(std::string value) : value_(std::move(value)) {}
  const std::string& reveal() const noexcept { return value_; }
  bool empty() const noexcept { return value_.empty(); }

 private:
  std::string value_;
};

}  // namespace hfget
