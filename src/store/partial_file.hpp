// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>

#include "util/unique_fd.hpp"

namespace hfget::store {

/// A file being downloaded. Bytes are only ever appended, so what is on disk is always a contiguous prefix
/// of the file and its size is the resume offset. It becomes visible under its final name only through
/// commit(), after the caller checked size and hash. Destroying a PartialFile closes it but never deletes
/// it: what we already have is what the next run resumes from. Do not "fix" that. (An empty one is removed:
/// it holds nothing to resume, and a refused download should leave no trace.)
class PartialFile {
 public:
  PartialFile(PartialFile&&) noexcept = default;
  PartialFile& operator=(PartialFile&&) noexcept = default;
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;
  ~PartialFile();

  /// Opens (or creates) the partial file; its current size is where the download resumes.
  static PartialFile open(const std::filesystem::path& path);

  std::uint64_t size() const noexcept { return size_; }
  const std::filesystem::path& path() const noexcept { return path_; }

  /// Throws Error{kDiskFull} on ENOSPC/EDQUOT, keeping what was written so far.
  void append(std::span<const std::byte> bytes);
  /// Writes at `offset` (chunked downloads write several ranges at once; pwrite needs no shared file offset).
  /// Safe to call from several threads for disjoint ranges. Throws like append().
  void write_at(std::uint64_t offset, std::span<const std::byte> bytes) const;
  /// Feeds bytes [begin, end) to `consumer` (read back from the page cache just written, to hash them).
  void read_range(std::uint64_t begin, std::uint64_t end,
                  const std::function<void(std::span<const std::byte>)>& consumer) const;
  /// Back to zero bytes: the server ignored our Range, or the content failed its hash check.
  void restart();
  /// Starts writing [begin, end) to the device without waiting for it (sync_file_range WRITE). Only a head
  /// start for commit()'s fdatasync, so a filesystem that cannot do it is not an error.
  void start_writeback(std::uint64_t begin, std::uint64_t end) const noexcept;
  /// Feeds the bytes already on disk to `consumer` in order (to rebuild a hash after a resume).
  void read_existing(const std::function<void(std::span<const std::byte>)>& consumer) const;
  /// Flushes the data, renames the file to `final_path` and flushes the directory entry.
  void commit(const std::filesystem::path& final_path) &&;

 private:
  PartialFile(std::filesystem::path path, util::UniqueFd fd, std::uint64_t size)
      : path_(std::move(path)), fd_(std::move(fd)), size_(size) {}

  std::filesystem::path path_;
  util::UniqueFd fd_;
  std::uint64_t size_;
};

}  // namespace hfget::store
