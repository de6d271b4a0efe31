// SPDX-License-Identifier: MIT
// A filesystem's support for symlinks is found by trying, not by its type name: a Samba share may allow
// them (unix extensions) or not, a FUSE filesystem may not implement them, and the same path can be a
// different mount tomorrow. The probe is a dangling relative link: whether the target exists does not change
// whether the filesystem stores links.
#include "store/symlink_support.hpp"

#include <unistd.h>

#include <cerrno>

#include "hfget/error.hpp"
#include "util/atomic_file.hpp"

namespace hfget::store {

bool is_symlink_refusal(int error_number) noexcept {
  // EPERM: vfat, exFAT, CIFS without unix extensions; ENOSYS: a FUSE filesystem without the operation;
  // EOPNOTSUPP (= ENOTSUP on Linux): others that say so.
  return error_number == EPERM || error_number == ENOSYS || error_number == EOPNOTSUPP;
}

bool symlinks_supported_in(const std::filesystem::path& directory) {
  const std::filesystem::path probe = util::temporary_path_beside(directory / "symlink-probe");
  if (::symlink("symlink-probe", probe.c_str()) == 0) {
    ::unlink(probe.c_str());
    return true;
  }
  const int error = errno;
  if (is_symlink_refusal(error)) return false;
  util::throw_file_error("cannot create a symlink in", directory, error);
}

}  // namespace hfget::store
