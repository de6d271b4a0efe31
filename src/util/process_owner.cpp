// SPDX-License-Identifier: MIT
#include "util/process_owner.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <regex>

#include "util/thread_random.hpp"

namespace hfget::util {
namespace {

const std::string& host_name() {
  static const std::string name = [] {
    std::array<char, 256> buffer{};
    std::string host = ::gethostname(buffer.data(), buffer.size() - 1) == 0 ? buffer.data() : "host";
    host = host.substr(0, 32);
    for (char& c : host) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    return host.empty() ? std::string("host") : host;
  }();
  return name;
}

bool recently_modified(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return false;
  const auto modified = std::chrono::system_clock::from_time_t(info.st_mtim.tv_sec);
  return std::chrono::system_clock::now() - modified < kForeignOwnerStaleAfter;
}

}  // namespace

std::string new_owner_token() {
  return fmt::format("{}-{}-{:08x}", host_name(), ::getpid(), static_cast<std::uint32_t>(thread_random()()));
}

std::optional<ProcessOwner> parse_owner_token(const std::string& text) {
  static const std::regex pattern("([A-Za-z0-9_]{1,32})-([0-9]{1,10})-[0-9a-f]{8}");
  std::smatch match;
  if (!std::regex_match(text, match, pattern)) return std::nullopt;
  return ProcessOwner{match[1].str(), std::stol(match[2].str())};
}

bool owner_may_be_alive(const ProcessOwner& owner, std::initializer_list<std::filesystem::path> files) {
  if (owner.host == host_name()) return ::kill(static_cast<pid_t>(owner.pid), 0) == 0 || errno == EPERM;
  for (const std::filesystem::path& file : files) {
    if (recently_modified(file)) return true;
  }
  return false;
}

}  // namespace hfget::util
