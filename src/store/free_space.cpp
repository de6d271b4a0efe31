// SPDX-License-Identifier: MIT
#include "store/free_space.hpp"

#include <sys/statvfs.h>

namespace hfget::store {

std::optional<std::uint64_t> free_bytes(const std::filesystem::path& path) {
  std::filesystem::path probe = std::filesystem::absolute(path);
  std::error_code error;
  while (!std::filesystem::exists(probe, error) && probe.has_parent_path() && probe != probe.parent_path()) {
    probe = probe.parent_path();
  }
  struct statvfs info {};
  if (::statvfs(probe.c_str(), &info) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(info.f_bavail) * static_cast<std::uint64_t>(info.f_frsize);
}

}  // namespace hfget::store
