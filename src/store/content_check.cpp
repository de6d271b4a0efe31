// SPDX-License-Identifier: MIT
// One read of the whole file, so it is asked only where no record vouches for the file and the size already
// matches: a wrong-sized file is downloaded again without being read.
#include "store/content_check.hpp"

#include <sys/stat.h>

#include "crypto/content_hasher.hpp"
#include "hfget/error.hpp"
#include "io/file_reads.hpp"

namespace hfget::store {

bool holds_listed_content(const std::filesystem::path& path, const RemoteFile& file, const std::stop_token& stop) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) ||
      static_cast<std::uint64_t>(info.st_size) != file.size) {
    return false;
  }
  crypto::ContentHasher hasher(file);
  try {
    io::read_file(path, [&](std::span<const std::byte> bytes) {
      if (stop.stop_requested()) throw Error(ErrorCode::kInterrupted, "interrupted");
      hasher.update(bytes);
    });
  } catch (const Error& error) {
    if (error.code() != ErrorCode::kVerificationFailed) throw;
    return false;
  }
  return hasher.finish_hex() == hasher.expected();
}

}  // namespace hfget::store
