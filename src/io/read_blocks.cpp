// SPDX-License-Identifier: MIT
#include "io/read_blocks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "util/atomic_file.hpp"

namespace hfget::io {

std::uint64_t read_through(int fd, std::uint64_t begin, std::uint64_t end, std::span<std::byte> buffer,
                           const std::filesystem::path& path, const BlockConsumer& consumer) {
  std::uint64_t offset = begin;
  while (offset < end) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), end - offset));
    const ssize_t n = ::pread(fd, buffer.data(), want, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) util::throw_file_error("cannot read", path, errno);
    if (n == 0) break;
    consumer(buffer.first(static_cast<std::size_t>(n)));
    offset += static_cast<std::uint64_t>(n);
  }
  return offset;
}

void read_blocks(int fd, std::uint64_t begin, std::uint64_t end, const std::filesystem::path& path,
                 const BlockConsumer& consumer, std::size_t block_bytes) {
  const std::uint64_t length = end > begin ? end - begin : 0;
  // Not zeroed: pread overwrites what the consumer sees (a 4 MiB buffer per resumed file, 256 KiB per range
  // read back while downloading).
  const auto size =
      static_cast<std::size_t>(std::clamp<std::uint64_t>(length, 1, std::max<std::size_t>(block_bytes, 1)));
  const auto buffer = std::make_unique_for_overwrite<std::byte[]>(size);
  ::posix_fadvise(fd, static_cast<off_t>(begin), static_cast<off_t>(length), POSIX_FADV_SEQUENTIAL);
  if (read_through(fd, begin, end, {buffer.get(), size}, path, consumer) < end) {
    util::throw_file_error("unexpected end of", path, EIO);
  }
}

}  // namespace hfget::io
