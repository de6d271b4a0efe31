// SPDX-License-Identifier: MIT
#include "io/file_reads.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <memory>
#include <span>

#include "hfget/error.hpp"
#include "util/atomic_file.hpp"
#include "util/sigbus_guard.hpp"
#include "util/unique_fd.hpp"

namespace hfget::io {
namespace {

// Owns one mapping and unmaps it once.
class Mapping {
 public:
  Mapping(void* address, std::size_t length) noexcept : address_(address), length_(length) {}
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { ::munmap(address_, length_); }

  std::span<const std::byte> bytes() const noexcept { return {static_cast<const std::byte*>(address_), length_}; }

 private:
  void* address_;
  std::size_t length_;
};

std::uint64_t window_length(std::size_t window_bytes) {
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));  // mmap offsets are whole pages
  const std::uint64_t wanted = std::max<std::uint64_t>(window_bytes, 1);
  return (wanted + page - 1) / page * page;
}

// Before each piece of a mapped window goes to the consumer, the reader touches the pages this far ahead of
// it (one byte a page). On an Intel host, SHA-256 reading a mapping of the page cache otherwise stalled at
// every new page: 1.87 CPU-s for 2 GiB, against 1.15 s with the touches, which let those stalls overlap.
// Leads of 16 to 64 KiB did that; 128 KiB and more did nothing (docs/benchmarks.md).
constexpr std::size_t kTouchLeadBytes = 64 << 10;

void feed_touching_ahead(std::span<const std::byte> window, const BlockConsumer& consumer) {
  static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  for (std::size_t offset = 0; offset < window.size(); offset += kMappedPieceBytes) {
    const std::size_t length = std::min(kMappedPieceBytes, window.size() - offset);
    const std::size_t touch_end = std::min(window.size(), offset + kTouchLeadBytes + length);
    for (std::size_t touch = offset + kTouchLeadBytes; touch < touch_end; touch += page) {
      static_cast<void>(*static_cast<const volatile std::byte*>(window.data() + touch));
    }
    consumer(window.subspan(offset, length));
  }
}

// CPU time, not wall time: the other hashing threads and the disk do not count against a method.
std::chrono::nanoseconds thread_cpu_time() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

// The file no longer reaches `window_end` when it is shorter now than when opened (truncated or rewritten
// under us): the bytes on disk no longer match what the listing promises, a verification failure, not a bug.
// Otherwise the device could not deliver the bytes.
[[noreturn]] void throw_read_fault(int fd, const std::filesystem::path& path, std::uint64_t size_when_opened,
                                   std::uint64_t window_end) {
  struct stat info {};
  if (::fstat(fd, &info) == 0 && static_cast<std::uint64_t>(info.st_size) < window_end) {
    throw Error(ErrorCode::kVerificationFailed,
                fmt::format("'{}' changed or truncated while being read ({} bytes when opened, {} now)", path.string(),
                            size_when_opened, info.st_size),
                path);
  }
  util::throw_file_error("cannot read", path, EIO);
}

class WindowReader {
 public:
  WindowReader(const std::filesystem::path& path, int fd, std::uint64_t size, const BlockConsumer& consumer)
      : path_(path), fd_(fd), size_(size), consumer_(consumer) {}

  // Returns false when the window could not be mapped, having fed nothing.
  bool mapped(std::uint64_t offset, std::size_t length) {
    void* const address = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd_, static_cast<off_t>(offset));
    if (address == MAP_FAILED) return false;
    const Mapping mapping(address, length);
    // Read-ahead on faults, and the pages go early when memory is short: each is read once.
    ::madvise(address, length, MADV_SEQUENTIAL);
    const std::span<const std::byte> bytes = mapping.bytes();
    const auto feed = [this, bytes] { feed_touching_ahead(bytes, consumer_); };
    if (!util::run_with_sigbus_guard(bytes, feed)) throw_read_fault(fd_, path_, size_, offset + length);
    return true;
  }

  void copied(std::uint64_t offset, std::size_t length) {
    if (!buffer_) {
      // Not zeroed, and no larger than the file: verifying 8,000 small files spent a third of its time
      // clearing 256 KiB buffers for a few bytes each.
      buffer_size_ = static_cast<std::size_t>(std::min<std::uint64_t>(kCopyBlockBytes, size_));
      buffer_ = std::make_unique_for_overwrite<std::byte[]>(buffer_size_);
    }
    const std::uint64_t end = offset + length;
    if (read_through(fd_, offset, end, {buffer_.get(), buffer_size_}, path_, consumer_) < end) {
      throw_read_fault(fd_, path_, size_, end);
    }
  }

 private:
  const std::filesystem::path& path_;
  int fd_;
  std::uint64_t size_;
  const BlockConsumer& consumer_;
  std::unique_ptr<std::byte[]> buffer_;  // allocated on the first copied window
  std::size_t buffer_size_ = 0;
};

}  // namespace

void read_file(const std::filesystem::path& path, const BlockConsumer& consumer, ReadMethodChooser& chooser,
               std::size_t window_bytes) {
  util::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) util::throw_file_error("cannot open", path, errno);
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) util::throw_file_error("cannot stat", path, errno);
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size == 0) return;  // nothing to feed (and mmap refuses a length of 0)

  // Doubles the file's read-ahead, which page faults use too (with MADV_SEQUENTIAL on each mapping). Without
  // it a cold read through a mapping was about a quarter slower than pread.
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  WindowReader reader(path, fd.get(), size, consumer);
  const std::uint64_t window = window_length(window_bytes);
  for (std::uint64_t offset = 0; offset < size;) {
    const auto length = static_cast<std::size_t>(std::min(window, size - offset));
    ReadMethod method = chooser.choose(length);
    const std::chrono::nanoseconds started = thread_cpu_time();
    if (method == ReadMethod::kMapped && !reader.mapped(offset, length)) method = ReadMethod::kCopied;
    if (method == ReadMethod::kCopied) reader.copied(offset, length);
    chooser.record(method, length, thread_cpu_time() - started);
    offset += length;
  }
}

}  // namespace hfget::io
