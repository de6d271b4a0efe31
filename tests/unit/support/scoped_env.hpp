// SPDX-License-Identifier: MIT
// Sets or unsets environment variables for one test and puts back what was there before, in reverse order.
#pragma once

#include <stdlib.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hfget::test_support {

class ScopedEnv {
 public:
  ScopedEnv() = default;
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }

  ScopedEnv& set(const std::string& name, const std::string& value) {
    save(name);
    ::setenv(name.c_str(), value.c_str(), 1);
    return *this;
  }

  ScopedEnv& unset(const std::string& name) {
    save(name);
    ::unsetenv(name.c_str());
    return *this;
  }

 private:
  void save(const std::string& name) {
    const char* value = ::getenv(name.c_str());
    saved_.emplace_back(name, value == nullptr ? std::nullopt : std::optional<std::string>(value));
  }

  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace hfget::test_support
