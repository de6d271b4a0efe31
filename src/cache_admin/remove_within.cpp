// SPDX-License-Identifier: MIT
// The one way `cache rm` and `rm --local-dir` delete anything. The paths come from a scan of folders other
// programs (and users) also write to, so each removal is first checked to stay inside its root, reached only
// through real directories; std::filesystem::remove_all then removes symlinks as links, never their targets.
#include "cache_admin/remove_within.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "hfget/error.hpp"
#include "util/atomic_file.hpp"

namespace hfget::cache_admin {
namespace {

bool is_strictly_within(const std::filesystem::path& root, const std::filesystem::path& path) {
  const std::filesystem::path relative = path.lexically_normal().lexically_relative(root.lexically_normal());
  return !relative.empty() && *relative.begin() != ".." && relative != ".";
}

// Every folder from `root` (excluded) down to the parent of `path` must be a real directory.
void check_reached_through_directories(const std::filesystem::path& root, const std::filesystem::path& path) {
  const std::filesystem::path relative = path.lexically_normal().lexically_relative(root.lexically_normal());
  std::filesystem::path current = root;
  for (const std::filesystem::path& component : relative.parent_path()) {
    current /= component;
    struct stat info {};
    if (::lstat(current.c_str(), &info) != 0) {
      if (errno == ENOENT) return;  // nothing below a missing folder to remove
      util::throw_file_error("cannot inspect", current, errno);
    }
    if (!S_ISDIR(info.st_mode)) {
      throw Error(ErrorCode::kInternal,
                  "refusing to remove " + path.string() + ": " + current.string() + " is a symlink or not a folder",
                  current);
    }
  }
}

}  // namespace

bool is_within(const std::filesystem::path& root, const std::filesystem::path& path) {
  const std::filesystem::path relative = path.lexically_normal().lexically_relative(root.lexically_normal());
  return !relative.empty() && *relative.begin() != "..";
}

std::uint64_t bytes_below(const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return 0;
  if (S_ISREG(info.st_mode)) return static_cast<std::uint64_t>(info.st_size);
  if (!S_ISDIR(info.st_mode)) return 0;
  std::uint64_t total = 0;
  std::error_code error;
  // The default options do not descend into symlinked folders.
  for (auto it = std::filesystem::recursive_directory_iterator(path, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (::lstat(it->path().c_str(), &info) == 0 && S_ISREG(info.st_mode)) {
      total += static_cast<std::uint64_t>(info.st_size);
    }
  }
  return total;
}

std::uint64_t remove_within(const std::filesystem::path& root, const std::filesystem::path& path) {
  if (!is_strictly_within(root, path)) {
    throw Error(ErrorCode::kInternal, "refusing to remove " + path.string() + ": not inside " + root.string(), path);
  }
  check_reached_through_directories(root, path);
  const std::uint64_t bytes = bytes_below(path);
  std::error_code error;
  std::filesystem::remove_all(path, error);
  if (error) util::throw_file_error("cannot remove", path, error.value());
  return bytes;
}

bool remove_empty_directory_within(const std::filesystem::path& root, const std::filesystem::path& directory) {
  if (!is_strictly_within(root, directory)) return false;
  check_reached_through_directories(root, directory);
  struct stat info {};
  if (::lstat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return false;
  return ::rmdir(directory.c_str()) == 0;
}

}  // namespace hfget::cache_admin
