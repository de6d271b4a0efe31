// SPDX-License-Identifier: MIT
#include "util/env.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace hfget::util {

std::optional<std::string> env_value(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before any thread starts
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::optional<std::string> env_nonempty(const char* name) {
  std::optional<std::string> value = env_value(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

bool env_flag(const char* name) {
  std::optional<std::string> value = env_value(name);
  if (!value) return false;
  std::string upper = *value;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return upper == "1" || upper == "ON" || upper == "YES" || upper == "TRUE";
}

namespace {

std::string expand_user(const std::string& text) {
  if (text.empty() || text[0] != '~') return text;
  if (text.size() > 1 && text[1] != '/') return text;  // ~user is not supported; leave it as written
  std::optional<std::string> home = env_nonempty("HOME");
  if (!home) return text;
  return *home + text.substr(1);
}

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

std::string expand_vars(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] != '$') {
      out += text[i++];
      continue;
    }
    std::size_t name_begin = i + 1;
    std::size_t name_end = name_begin;
    std::size_t after = name_begin;
    if (name_begin < text.size() && text[name_begin] == '{') {
      const std::size_t close = text.find('}', name_begin);
      if (close == std::string::npos) {
        out += text[i++];
        continue;
      }
      name_begin += 1;
      name_end = close;
      after = close + 1;
    } else {
      while (name_end < text.size() && is_name_char(text[name_end])) ++name_end;
      after = name_end;
    }
    const std::string name = text.substr(name_begin, name_end - name_begin);
    std::optional<std::string> value = name.empty() ? std::nullopt : env_value(name.c_str());
    out += value ? *value : text.substr(i, after - i);
    i = after;
  }
  return out;
}

}  // namespace

std::filesystem::path expand_user_and_vars(const std::string& text) {
  return std::filesystem::path(expand_vars(expand_user(text)));
}

}  // namespace hfget::util
