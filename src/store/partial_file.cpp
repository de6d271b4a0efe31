// SPDX-License-Identifier: MIT
#include "store/partial_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "io/read_blocks.hpp"
#include "util/atomic_file.hpp"

namespace hfget::store {

PartialFile PartialFile::open(const std::filesystem::path& path) {
  util::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666));
  if (!fd.valid()) util::throw_file_error("cannot open partial file", path, errno);
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) util::throw_file_error("cannot stat", path, errno);
  if (!S_ISREG(info.st_mode)) util::throw_file_error("not a regular file", path, EINVAL);
  return PartialFile(path, std::move(fd), static_cast<std::uint64_t>(info.st_size));
}

PartialFile::~PartialFile() {
  if (!fd_.valid()) return;
  struct stat info {};
  if (::fstat(fd_.get(), &info) == 0 && info.st_size == 0) ::unlink(path_.c_str());
}

void PartialFile::append(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::pwrite(fd_.get(), bytes.data(), bytes.size(), static_cast<off_t>(size_));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) util::throw_file_error("cannot write", path_, errno);
    size_ += static_cast<std::uint64_t>(n);
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
}

void PartialFile::write_at(std::uint64_t offset, std::span<const std::byte> bytes) const {
  while (!bytes.empty()) {
    const ssize_t n = ::pwrite(fd_.get(), bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) util::throw_file_error("cannot write", path_, errno);
    offset += static_cast<std::uint64_t>(n);
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
}

void PartialFile::read_range(std::uint64_t begin, std::uint64_t end,
                             const std::function<void(std::span<const std::byte>)>& consumer) const {
  // Small blocks: several files are hashed at once while downloading, and this runs only for ranges that
  // arrived out of order (the rest is hashed from the write buffer).
  constexpr std::size_t kReadBackBytes = 256 << 10;
  io::read_blocks(fd_.get(), begin, end, path_, consumer, kReadBackBytes);
}

void PartialFile::start_writeback(std::uint64_t begin, std::uint64_t end) const noexcept {
  if (end > begin) {
    ::sync_file_range(fd_.get(), static_cast<off_t>(begin), static_cast<off_t>(end - begin), SYNC_FILE_RANGE_WRITE);
  }
}

void PartialFile::restart() {
  if (::ftruncate(fd_.get(), 0) != 0) util::throw_file_error("cannot truncate", path_, errno);
  size_ = 0;
}

void PartialFile::read_existing(const std::function<void(std::span<const std::byte>)>& consumer) const {
  io::read_blocks(fd_.get(), 0, size_, path_, consumer);
}

void PartialFile::commit(const std::filesystem::path& final_path) && {
  if (::fdatasync(fd_.get()) != 0) util::throw_file_error("cannot flush", path_, errno);
  if (::rename(path_.c_str(), final_path.c_str()) != 0) util::throw_file_error("cannot publish", final_path, errno);
  util::UniqueFd directory(::open(final_path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (directory.valid()) ::fsync(directory.get());
  fd_.reset();
}

}  // namespace hfget::store
