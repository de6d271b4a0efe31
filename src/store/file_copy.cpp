// SPDX-License-Identifier: MIT
// Used where a snapshot cannot link to its blob (a filesystem without symlinks): the blob is duplicated into
// the snapshot, as huggingface_hub does for a blob it did not download in this call. copy_file_range lets the
// kernel copy (or share extents, on btrfs and XFS) without the bytes passing through hfget; filesystems that
// do not offer it (FUSE ones, or across mounts) get a plain read/write loop.
#include "store/file_copy.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "util/atomic_file.hpp"
#include "util/unique_fd.hpp"

namespace hfget::store {
namespace {

constexpr std::size_t kCopyBufferBytes = 1 << 20;

// Returns 0 on success, else the errno of the failed write (reads fail the same way: the errno is theirs).
int copy_contents(int in, int out) {
  bool kernel_copy = true;
  std::vector<char> buffer;
  for (;;) {
    if (kernel_copy) {
      const ssize_t n = ::copy_file_range(in, nullptr, out, nullptr, kCopyBufferBytes * 64, 0);
      if (n == 0) return 0;
      if (n > 0) continue;
      if (errno == EINTR) continue;
      if (errno != EXDEV && errno != ENOSYS && errno != EOPNOTSUPP && errno != EINVAL) return errno;
      kernel_copy = false;  // nothing was copied by the failed call: the offsets are where they were
      buffer.resize(kCopyBufferBytes);
    }
    const ssize_t got = ::read(in, buffer.data(), buffer.size());
    if (got == 0) return 0;
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    for (ssize_t done = 0; done < got;) {
      const ssize_t n = ::write(out, buffer.data() + done, static_cast<std::size_t>(got - done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno;
      done += n;
    }
  }
}

}  // namespace

void copy_file_atomically(const std::filesystem::path& from, const std::filesystem::path& to) {
  const util::UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!in.valid()) util::throw_file_error("cannot read", from, errno);
  const std::filesystem::path temporary = util::temporary_path_beside(to);
  util::UniqueFd out(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666));
  if (!out.valid()) util::throw_file_error("cannot create", temporary, errno);
  int error = copy_contents(in.get(), out.get());
  if (error == 0 && ::fdatasync(out.get()) != 0) error = errno;
  out.reset();
  if (error == 0 && ::rename(temporary.c_str(), to.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    util::throw_file_error(fmt::format("cannot copy '{}' to", from.string()), to, error);
  }
}

}  // namespace hfget::store
