// SPDX-License-Identifier: MIT
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace hfget::store {

/// What identifies one version of a file on disk without reading it: the inode and its times. The change
/// time (ctime) cannot be set by any program, so a file rewritten in place, replaced, or touched back to its
/// old mtime no longer matches (file times move in kernel ticks of a few ms: a change within the very tick
/// hfget recorded the file in would go unseen; no writer that comes after hfget is that fast).
struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;

  static std::optional<FileIdentity> of(const std::filesystem::path& path);  // nullopt: not a regular file
  bool operator==(const FileIdentity&) const = default;
};

/// hfget's own record of the files it put into a local dir after checking their bytes (published after a
/// download, or adopted after hashing): .cache/huggingface/hfget/published.jsonl, one line per file, the last
/// line of a path winning. huggingface_hub's .metadata files say "commit X, etag Y, written at T", but any
/// writer can produce one, and a timestamp proves nothing about the bytes; this record vouches only for the
/// very file hfget checked, unchanged since. A download trusts a file without re-hashing it, and `hfget rm`
/// removes one, only when the record vouches for it. Thread-safe.
class PublishedFiles {
 public:
  /// Reads the record in `state_dir` (an absent or unreadable record vouches for nothing).
  explicit PublishedFiles(std::filesystem::path state_dir);

  /// True when `file` is, unchanged, the file hfget checked for `repo_path` with this etag.
  bool vouches_for(const std::string& repo_path, const std::string& etag, const std::filesystem::path& file) const;
  /// The recorded paths whose last record names `etag` (whether their files are still unchanged is for
  /// vouches_for to say), sorted.
  std::vector<std::string> paths_with_etag(const std::string& etag) const;
  /// Records `file` as checked for `repo_path` and `etag`. Throws Error when the record cannot be written.
  void record(const std::string& repo_path, const std::string& etag, const std::filesystem::path& file);

 private:
  struct Entry {
    std::string etag;
    FileIdentity identity;
  };

  void put(const std::string& repo_path, Entry entry);  // requires mutex_ (or the constructor)

  std::filesystem::path path_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  // The same, by etag: each published Xet file asks which files hold its content, and a scan of every entry
  // each time made a download of n files O(n²) (a dataset of 100,000 files in one local dir).
  std::map<std::string, std::set<std::string>> paths_by_etag_;
};

}  // namespace hfget::store
