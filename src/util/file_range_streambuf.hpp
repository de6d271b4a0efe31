// SPDX-License-Identifier: MIT
// The JSON documents hfget reads from downloaded files (a safetensors header of up to 100 MB, a shard index
// of up to 256 MiB) are parsed as a stream of events that keeps only what the checks use. Reading such a
// file into a string first would cost its whole size again, and more while the string grows; this buffer
// hands the parser one 64 KiB window at a time instead. It reads a byte range, not the whole file, so that a
// header's parse stops where the header ends and never runs into the tensor data.
#pragma once

#include <cstdint>
#include <memory>
#include <streambuf>

namespace hfget::util {

/// A read-only std::streambuf over bytes [offset, offset + length) of an open file (the descriptor is
/// borrowed, not closed), read with pread. A read error or a file that ends before the range does ends the
/// stream early; error() and ended_early() tell which, so the caller can say why the document was cut.
class FileRangeStreambuf : public std::streambuf {
 public:
  FileRangeStreambuf(int fd, std::uint64_t offset, std::uint64_t length);

  int error() const noexcept { return error_; }  // errno of the failed read, 0 if none failed
  bool ended_early() const noexcept { return ended_early_; }

 protected:
  int_type underflow() override;

 private:
  static constexpr std::size_t kWindowBytes = 64 * 1024;

  int fd_;
  std::uint64_t next_;  // file offset of the byte after the current window
  std::uint64_t end_;
  int error_ = 0;
  bool ended_early_ = false;
  std::unique_ptr<char[]> window_;
};

}  // namespace hfget::util
