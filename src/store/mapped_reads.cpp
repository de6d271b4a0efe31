// SPDX-License-Identifier: MIT
#include "store/mapped_reads.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <span>

#include "hfget/error.hpp"
#include "util/atomic_file.hpp"
#include "util/sigbus_guard.hpp"
#include "util/unique_fd.hpp"

namespace hfget::store {
namespace {

// Owns one mapping and unmaps it once.
class Mapping {
 public:
  Mapping(void* address, std::size_t length) noexcept : address_(address), length_(length) {}
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { ::munmap(address_, length_); }

  std::span<const std::byte> bytes() const noexcept {
    return {static_cast<const std::byte*>(address_), length_};
  }

 private:
  void* address_;
  std::size_t length_;
};

std::uint64_t window_length(std::size_t window_bytes) {
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));  // mmap offsets are whole pages
  const std::uint64_t wanted = std::max<std::uint64_t>(window_bytes, 1);
  return (wanted + page - 1) / page * page;
}

// A SIGBUS in a window: the file no longer reaches its end (truncated or rewritten under us), or the device
// could not deliver a page.
[[noreturn]] void throw_read_fault(int fd, const std::filesystem::path& path, std::uint64_t size_when_opened,
                                   std::uint64_t window_end) {
  struct stat info {};
  if (::fstat(fd, &info) == 0 && static_cast<std::uint64_t>(info.st_size) < window_end) {
    // The bytes on disk no longer match what the listing promises: a verification failure, not a bug.
    throw Error(ErrorCode::kVerificationFailed,
                fmt::format("'{}' changed or truncated while being read ({} bytes when opened, {} now)",
                            path.string(), size_when_opened, info.st_size),
                path);
  }
  util::throw_file_error("cannot read", path, EIO);
}

}  // namespace

void read_file_mapped(const std::filesystem::path& path, const BlockConsumer& consumer,
                      std::size_t window_bytes) {
  util::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) util::throw_file_error("cannot open", path, errno);
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) util::throw_file_error("cannot stat", path, errno);
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size == 0) return;  // nothing to feed (and mmap refuses a length of 0)

  // Doubles the file's read-ahead, which page faults use too (with MADV_SEQUENTIAL below). Without it a cold
  // read through the mapping was about a quarter slower than read_blocks, which asks for the same.
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  const std::uint64_t window = window_length(window_bytes);
  for (std::uint64_t offset = 0; offset < size;) {
    const auto length = static_cast<std::size_t>(std::min(window, size - offset));
    void* const address =
        ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd.get(), static_cast<off_t>(offset));
    if (address == MAP_FAILED) {
      read_blocks(fd.get(), offset, size, path, consumer);
      return;
    }
    const Mapping mapping(address, length);
    // Read-ahead on faults, and the pages go early when memory is short: each is read once.
    ::madvise(address, length, MADV_SEQUENTIAL);
    const std::span<const std::byte> bytes = mapping.bytes();
    const auto feed = [&consumer, bytes] { consumer(bytes); };
    if (!util::run_with_sigbus_guard(bytes, feed)) throw_read_fault(fd.get(), path, size, offset + length);
    offset += length;
  }
}

}  // namespace hfget::store
