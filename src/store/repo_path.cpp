// SPDX-License-Identifier: MIT
// Never trust the server: every path from a listing passes here before it is joined to a directory.
#include "store/repo_path.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <set>

#include "hfget/error.hpp"
#include "util/printable.hpp"

namespace hfget::store {
namespace {

constexpr std::size_t kMaxPathBytes = 4096;
constexpr std::size_t kMaxComponentBytes = NAME_MAX;  // the most a file name may have on Linux
// No Hub repo comes near this (the largest datasets are a few hundred TB); it keeps every sum of listed sizes
// (the plan, the free-space check, progress) far from overflowing 64 bits.
constexpr std::uint64_t kMaxListingBytes = std::uint64_t{1} << 53;

std::string printable(std::string_view text) {
  return util::printable(text, 120);
}

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equals_ignoring_case(std::string_view text, std::string_view lowercase) {
  if (text.size() != lowercase.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (lower(text[i]) != lowercase[i]) return false;
  }
  return true;
}

// What git itself refuses in a tree (fsck's verify_dotfile): ".git" in any case, also with the trailing dots
// and spaces Windows drops, and its NTFS short name. A real Hub repo is a git repo and can never list one; a
// listed .git/config written into a checkout would run the server's core.fsmonitor on the next `git status`.
bool is_git_directory_name(std::string_view component) {
  std::string_view name = component;
  while (!name.empty() && (name.back() == '.' || name.back() == ' ')) name.remove_suffix(1);
  return equals_ignoring_case(name, ".git") || equals_ignoring_case(component, "git~1");
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
  if (util::has_unprintable(path)) return "invalid UTF-8, or an invisible or bidi control character, in path";
  std::string_view rest = path;
  while (true) {
    const std::size_t slash = rest.find('/');
    const std::string_view component = rest.substr(0, slash);
    if (component.empty()) return "empty path component";
    if (component == "." || component == "..") return "'.' or '..' path component";
    if (component.size() > kMaxComponentBytes) return "path component longer than 255 bytes";
    if (is_git_directory_name(component)) return "'.git' path component (git's own files)";
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return std::nullopt;
}

bool is_reserved_metadata_path(std::string_view path) {
  // Any case: a case-folding filesystem (a NAS, macOS) would put ".CACHE/HuggingFace" in the same place.
  const std::size_t first_slash = path.find('/');
  if (!equals_ignoring_case(path.substr(0, first_slash), ".cache")) return false;
  if (first_slash == std::string_view::npos) return true;
  const std::string_view rest = path.substr(first_slash + 1);
  return equals_ignoring_case(rest.substr(0, rest.find('/')), "huggingface");
}

std::vector<std::string> validate_listing(std::vector<RemoteFile>& files) {
  std::vector<std::string> dropped;
  std::erase_if(files, [&](const RemoteFile& file) {
    if (!is_reserved_metadata_path(file.path)) return false;
    dropped.push_back(printable(file.path));
    return true;
  });
  // A git repo may hold such files (pushed by hand); they are not part of any model and are skipped, said
  // once, with the first few named.
  if (!dropped.empty()) {
    std::string named;
    for (std::size_t i = 0; i < dropped.size() && i < 3; ++i) named += fmt::format("{}'{}'", i ? ", " : "", dropped[i]);
    spdlog::warn(
        "skipping {} listed file(s) under .cache/huggingface/, where hfget and huggingface_hub keep their "
        "own metadata: {}{}",
        dropped.size(), named, dropped.size() > 3 ? fmt::format(" (and {} more)", dropped.size() - 3) : "");
  }
  std::set<std::string_view> paths;
  std::uint64_t total_bytes = 0;
  for (const RemoteFile& file : files) {
    if (std::optional<std::string> reason = unsafe_path_reason(file.path)) {
      throw Error(ErrorCode::kNetwork, fmt::format("the Hub listed an unsafe path '{}': {}; refusing to download",
                                                   printable(file.path), *reason));
    }
    if (!paths.insert(file.path).second) {
      throw Error(ErrorCode::kNetwork, fmt::format("the Hub listed '{}' twice", printable(file.path)));
    }
    if (__builtin_add_overflow(total_bytes, file.size, &total_bytes) || total_bytes > kMaxListingBytes) {
      throw Error(ErrorCode::kNetwork,
                  fmt::format("the Hub's listing adds up to more than {} bytes (at '{}'): refusing an impossible "
                              "repository",
                              kMaxListingBytes, printable(file.path)));
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
  return dropped;
}

void create_directories_within(const std::filesystem::path& root, const std::filesystem::path& relative_dir) {
  std::filesystem::path current = root;
  for (const std::filesystem::path& component : relative_dir) {
    current /= component;
    struct stat info {};
    if (::lstat(current.c_str(), &info) == 0) {
      if (!S_ISDIR(info.st_mode)) {
        // A file in the way is the user's to move (exit 11); a symlink there may be planted, and stays a
        // refusal of its own (exit 1) that the hostile-input tests pin.
        throw Error(S_ISLNK(info.st_mode) ? ErrorCode::kInternal : ErrorCode::kNotWritable,
                    fmt::format("'{}' is in the way: expected a directory, found {}", current.string(),
                                S_ISLNK(info.st_mode) ? "a symlink (refusing to follow it)" : "a file"),
                    current);
      }
      continue;
    }
    if (::mkdir(current.c_str(), 0777) != 0 && errno != EEXIST) {
      const int error = errno;
      const bool not_writable = error == EACCES || error == EROFS || error == EPERM || error == ENOTDIR;
      throw Error(error == ENOSPC || error == EDQUOT ? ErrorCode::kDiskFull
                  : not_writable                     ? ErrorCode::kNotWritable
                                                     : ErrorCode::kInternal,
                  fmt::format("cannot create directory '{}': {}", current.string(), std::strerror(error)), current);
    }
  }
}

}  // namespace hfget::store
