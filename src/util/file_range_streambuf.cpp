// SPDX-License-Identifier: MIT
#include "util/file_range_streambuf.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace hfget::util {

FileRangeStreambuf::FileRangeStreambuf(int fd, std::uint64_t offset, std::uint64_t length)
    : fd_(fd), next_(offset), end_(offset + length), window_(new char[kWindowBytes]) {}

FileRangeStreambuf::int_type FileRangeStreambuf::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (next_ >= end_ || error_ != 0 || ended_early_) return traits_type::eof();
  const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kWindowBytes, end_ - next_));
  ssize_t got = 0;
  do {
    got = ::pread(fd_, window_.get(), want, static_cast<off_t>(next_));
  } while (got < 0 && errno == EINTR);
  if (got < 0) {
    error_ = errno;
    return traits_type::eof();
  }
  if (got == 0) {
    ended_early_ = true;
    return traits_type::eof();
  }
  next_ += static_cast<std::uint64_t>(got);
  setg(window_.get(), window_.get(), window_.get() + got);
  return traits_type::to_int_type(*gptr());
}

}  // namespace hfget::util
