// SPDX-License-Identifier: MIT
#include "store/read_blocks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "util/atomic_file.hpp"

namespace hfget::store {

void read_blocks(int fd, std::uint64_t begin, std::uint64_t end, const std::filesystem::path& path,
                 const BlockConsumer& consumer, std::size_t block_bytes) {
  const std::uint64_t length = end > begin ? end - begin : 0;
  std::vector<std::byte> buffer(
      static_cast<std::size_t>(std::min<std::uint64_t>(std::max<std::size_t>(block_bytes, 1), std::max<std::uint64_t>(length, 1))));
  ::posix_fadvise(fd, static_cast<off_t>(begin), static_cast<off_t>(length), POSIX_FADV_SEQUENTIAL);
  std::uint64_t offset = begin;
  while (offset < end) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), end - offset));
    const ssize_t n = ::pread(fd, buffer.data(), want, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) util::throw_file_error("cannot read", path, errno);
    if (n == 0) util::throw_file_error("unexpected end of", path, EIO);
    consumer(std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(n)));
    offset += static_cast<std::uint64_t>(n);
  }
}

}  // namespace hfget::store
