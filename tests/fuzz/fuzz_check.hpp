// SPDX-License-Identifier: MIT
// Shared by the fuzz targets: an invariant check that fails loudly (libFuzzer records the input as a crash),
// and an in-memory file for the parsers that read from a path.
#pragma once

#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#define HFGET_FUZZ_CHECK(condition)                                                               \
  do {                                                                                            \
    if (!(condition)) {                                                                           \
      std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                               \
    }                                                                                             \
  } while (false)

namespace hfget::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// One memfd per process, reached by path as the file readers want: no temp files left behind. Each write()
/// replaces the content (then extended with zeros to `size`, when larger) and returns the path.
class MemoryFile {
 public:
  explicit MemoryFile(const char* name) : fd_(::memfd_create(name, MFD_CLOEXEC)) {
    HFGET_FUZZ_CHECK(fd_ >= 0);
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  const std::string& write(std::string_view content, std::uint64_t size = 0) {
    HFGET_FUZZ_CHECK(::ftruncate(fd_, 0) == 0);
    std::size_t done = 0;
    while (done < content.size()) {
      const ssize_t n = ::pwrite(fd_, content.data() + done, content.size() - done, static_cast<off_t>(done));
      HFGET_FUZZ_CHECK(n > 0);
      done += static_cast<std::size_t>(n);
    }
    if (size > content.size()) HFGET_FUZZ_CHECK(::ftruncate(fd_, static_cast<off_t>(size)) == 0);
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

}  // namespace hfget::fuzz
