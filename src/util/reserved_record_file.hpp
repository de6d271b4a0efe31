// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <filesystem>
#include <string_view>

namespace hfget::util {

/// A small record (the state file `status` and `wait` read) that can still be rewritten once the disk is
/// full, which is exactly when its last word matters most. It is written padded with spaces to a fixed
/// capacity (trailing whitespace is valid JSON); each new version goes into a spare of the same size beside it
/// (`<name>.spare`), whose blocks are already allocated, and the two then trade names (renameat2
/// RENAME_EXCHANGE). So a rewrite allocates nothing, and readers see the old version or the new, never a torn
/// one. Overwriting allocated blocks needs no free space on ext4, XFS and tmpfs; on a copy-on-write filesystem
/// (btrfs, ZFS) it does, and there the record is as good as a plain atomic write. Where the exchange is not
/// supported (some network filesystems), it falls back to rename, which needs free space again.
class ReservedRecordFile {
 public:
  static constexpr std::size_t kDefaultCapacity = 16 * 1024;

  explicit ReservedRecordFile(std::filesystem::path path, std::size_t capacity = kDefaultCapacity);

  /// Replaces the record with `content` (one JSON document, say). Content longer than the capacity is written
  /// with write_file_atomically, unreserved. Writers of one record in several processes are serialised by a
  /// flock on `<name>.lock`, a third file that never moves. Throws hfget::Error (kDiskFull for ENOSPC/EDQUOT) when it
  /// cannot.
  void write(std::string_view content);

  const std::filesystem::path& path() const noexcept { return path_; }
  const std::filesystem::path& spare_path() const noexcept { return spare_path_; }

 private:
  std::filesystem::path path_;
  std::filesystem::path spare_path_;
  std::filesystem::path lock_path_;
  std::size_t capacity_;
};

}  // namespace hfget::util
