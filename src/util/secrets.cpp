// SPDX-License-Identifier: MIT
// The token is only ever sent to the Hub's own origin (http/easy_request.cpp, hub/hub_client.cpp); it is
// never put into a message by hfget. But a server decides what its answers and redirects say, so every line
// hfget prints passes through here too: one registry, consulted by the Error type and the log formatter.
#include "util/secrets.hpp"

#include <mutex>
#include <vector>

#include "hfget/secret.hpp"

namespace hfget::util {
namespace {

constexpr std::size_t kShortestSecret = 8;

struct Registry {
  std::mutex mutex;
  std::vector<std::string> secrets;
};

Registry& registry() {
  static Registry instance;  // intentionally never destroyed before the last log line
  return instance;
}

}  // namespace

void register_secret(std::string_view secret) {
  if (secret.size() < kShortestSecret) return;
  Registry& known = registry();
  const std::lock_guard lock(known.mutex);
  for (const std::string& existing : known.secrets) {
    if (existing == secret) return;
  }
  known.secrets.emplace_back(secret);
}

std::string redact_secrets(std::string text) {
  Registry& known = registry();
  const std::lock_guard lock(known.mutex);
  for (const std::string& secret : known.secrets) {
    for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3)) {
      text.replace(at, secret.size(), "***");
    }
  }
  return text;
}

}  // namespace hfget::util

namespace hfget::detail {

void remember_secret(std::string_view secret) {
  util::register_secret(secret);
}

}  // namespace hfget::detail
