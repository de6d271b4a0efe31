// SPDX-License-Identifier: MIT
// Builds HF cache repos on disk the way huggingface_hub lays them out (HUB-PROTOCOL §4), for the tests of the
// cache scan and removal: blobs, relative snapshot symlinks (one "../" more per sub-folder), bare refs.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace hfget::test_support {

inline const std::string kCommitA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
inline const std::string kCommitB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
inline const std::string kCommitC = "cccccccccccccccccccccccccccccccccccccccc";

inline void write_file(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

class FakeCacheRepo {
 public:
  FakeCacheRepo(std::filesystem::path cache_dir, const std::string& folder) : root_(std::move(cache_dir) / folder) {
    std::filesystem::create_directories(root_ / "blobs");
    std::filesystem::create_directories(root_ / "snapshots");
  }

  const std::filesystem::path& root() const noexcept { return root_; }

  /// blobs/<etag> with `content`.
  FakeCacheRepo& blob(const std::string& etag, const std::string& content) {
    write_file(root_ / "blobs" / etag, content);
    return *this;
  }

  /// snapshots/<commit>/<path> → ../../blobs/<etag> (relative, as huggingface_hub links it).
  FakeCacheRepo& link(const std::string& commit, const std::string& path, const std::string& etag) {
    const std::filesystem::path pointer = root_ / "snapshots" / commit / path;
    std::filesystem::create_directories(pointer.parent_path());
    const auto depth = static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
    std::string target;
    for (std::size_t i = 0; i < depth + 2; ++i) target += "../";
    std::filesystem::create_symlink(target + "blobs/" + etag, pointer);
    return *this;
  }

  /// refs/<name> holding the commit, without a newline.
  FakeCacheRepo& ref(const std::string& name, const std::string& commit) {
    write_file(root_ / "refs" / name, commit);
    return *this;
  }

 private:
  std::filesystem::path root_;
};

/// Every entry below `root` (files, links, folders) with its size for regular files, to compare before/after.
inline std::map<std::string, std::uintmax_t> tree_listing(const std::filesystem::path& root) {
  std::map<std::string, std::uintmax_t> entries;
  if (!std::filesystem::exists(std::filesystem::symlink_status(root))) return entries;
  for (auto it = std::filesystem::recursive_directory_iterator(root);
       it != std::filesystem::recursive_directory_iterator(); ++it) {
    const bool regular = it->is_regular_file() && !it->is_symlink();
    entries[it->path().lexically_relative(root).generic_string()] = regular ? it->file_size() : 0;
  }
  return entries;
}

}  // namespace hfget::test_support
