// SPDX-License-Identifier: MIT
// Never trust the server: every path from a listing passes here before it is joined to a directory.
#include "store/repo_path.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "hfget/error.hpp"

namespace hfget::store {
namespace {

constexpr std::size_t kMaxPathBytes = 4096;
constexpr std::size_t kMaxComponentBytes = 255;

std::string printable(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 120)) {
    const auto byte = static_cast<unsigned char>(c);
    out += (byte < 0x20 || byte == 0x7f) ? fmt::format("\\x{:02x}", byte) : std::string(1, c);
  }
  return out;
}

}  // namespace

std::optional<std::string> unsafe_path_reason(std::string_view path) {
  if (path.empty()) return "empty path";
  if (path.size() > kMaxPathBytes) return "path longer than 4096 bytes";
  if (path.front() == '/') return "absolute path";
  if (path.size() >= 2 && path[1] == ':') return "drive-letter path";
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) return "control character in path";
    if (c == '\\') return "backslash in path";
  }
  std::string_view rest = path;
  while (true) {
    const std::size_t slash = rest.find('/');
    const std::string_view component = rest.substr(0, slash);
    if (component.empty()) return "empty path component";
    if (component == "." || component == "..") return "'.' or '..' path component";
    if (component.size() > kMaxComponentBytes) return "path component longer than 255 bytes";
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return std::nullopt;
}

void validate_listing(const std::vector<RemoteFile>& files) {
  std::set<std::string_view> paths;
  for (const RemoteFile& file : files) {
    if (std::optional<std::string> reason = unsafe_path_reason(file.path)) {
      throw Error(ErrorCode::kNetwork, fmt::format("the Hub listed an unsafe path '{}': {}; refusing to download",
                                                   printable(file.path), *reason));
    }
    if (!paths.insert(file.path).second) {
      throw Error(ErrorCode::kNetwork, fmt::format("the Hub listed '{}' twice", printable(file.path)));
    }
  }
  for (const RemoteFile& file : files) {
    for (std::size_t slash = file.path.find('/'); slash != std::string::npos; slash = file.path.find('/', slash + 1)) {
      if (paths.count(std::string_view(file.path).substr(0, slash)) != 0) {
        throw Error(ErrorCode::kNetwork, fmt::format("the Hub listed '{}' both as a file and as a directory",
                                                     printable(file.path.substr(0, slash))));
      }
    }
  }
}

void create_directories_within(const std::filesystem::path& root, const std::filesystem::path& relative_dir) {
  std::filesystem::path current = root;
  for (const std::filesystem::path& component : relative_dir) {
    current /= component;
    struct stat info {};
    if (::lstat(current.c_str(), &info) == 0) {
      if (!S_ISDIR(info.st_mode)) {
        throw Error(ErrorCode::kInternal,
                    fmt::format("'{}' is in the way: expected a directory, found {}", current.string(),
                                S_ISLNK(info.st_mode) ? "a symlink (refusing to follow it)" : "a file"),
                    current);
      }
      continue;
    }
    if (::mkdir(current.c_str(), 0777) != 0 && errno != EEXIST) {
      const int error = errno;
      throw Error(error == ENOSPC ? ErrorCode::kDiskFull : ErrorCode::kInternal,
                  fmt::format("cannot create directory '{}': {}", current.string(), std::strerror(error)), current);
    }
  }
}

}  // namespace hfget::store
