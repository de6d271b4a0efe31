// SPDX-License-Identifier: MIT
// The reserved record: a spare of fixed size, overwritten in place under a flock, then exchanged with the record.
// The spare is (re)created, and its blocks allocated, only while that still works: on the first write (the
// download has just checked the free space) and after a fallback rename consumed it.
#include "util/reserved_record_file.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2 (glibc ≥ 2.28)
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "util/atomic_file.hpp"
#include "util/unique_fd.hpp"

namespace hfget::util {
namespace {

void write_all_at_start(int fd, std::string_view data, const std::filesystem::path& path) {
  std::size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::pwrite(fd, data.data() + written, data.size() - written, static_cast<off_t>(written));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_file_error("cannot write", path, errno);
    written += static_cast<std::size_t>(n);
  }
}

// Writers of one record are serialised by a flock on `<name>.lock`, a file that is never renamed. (Locking the
// spare itself, which trades names with the record on every write, sent a waiter that found the name moved
// round again and again, and a writer could end up waiting on the lock it held itself.) Without the lock file,
// say on a full disk beside a record an older version wrote, the write goes ahead unserialised: the record's last
// word matters more than the unlikely race with another writer of the same record.
UniqueFd lock_writers(const std::filesystem::path& lock) {
  UniqueFd fd(::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd.valid()) {
    if (errno == ENOSPC || errno == EDQUOT) return fd;
    throw_file_error("cannot open", lock, errno);
  }
  while (::flock(fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) throw_file_error("cannot lock", lock, errno);
  }
  return fd;
}

UniqueFd open_spare(const std::filesystem::path& spare) {
  UniqueFd fd(::open(spare.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd.valid()) throw_file_error("cannot open", spare, errno);
  return fd;
}

std::string padded(std::string_view content, std::size_t capacity) {
  std::string text(content);
  text.resize(capacity - 1, ' ');
  text += '\n';
  return text;
}

// Fills the spare to its full size, so that its blocks are allocated for the next write. Best effort.
void reserve_spare(const std::filesystem::path& spare, std::string_view content) {
  try {
    const UniqueFd fd = open_spare(spare);
    write_all_at_start(fd.get(), content, spare);
  } catch (const std::exception&) {
    // No reservation: the next write creates the spare, and needs free space for it.
  }
}

}  // namespace

ReservedRecordFile::ReservedRecordFile(std::filesystem::path path, std::size_t capacity)
    : path_(std::move(path)),
      spare_path_(path_.string() + ".spare"),
      lock_path_(path_.string() + ".lock"),
      capacity_(capacity) {}

void ReservedRecordFile::write(std::string_view content) {
  if (content.size() + 1 > capacity_) {
    write_file_atomically(path_, content);
    return;
  }
  const std::string text = padded(content, capacity_);
  const UniqueFd writers_lock = lock_writers(lock_path_);
  const UniqueFd spare = open_spare(spare_path_);
  write_all_at_start(spare.get(), text, spare_path_);
  struct stat info {};
  if (::fstat(spare.get(), &info) == 0 && static_cast<std::size_t>(info.st_size) > capacity_) {
    static_cast<void>(::ftruncate(spare.get(), static_cast<off_t>(capacity_)));  // a larger capacity before
  }
  if (::fdatasync(spare.get()) != 0) throw_file_error("cannot write", spare_path_, errno);
  if (::renameat2(AT_FDCWD, spare_path_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) == 0) {
    // The old record is the spare now; one an older version wrote is smaller than the capacity.
    struct stat old_record {};
    if (::stat(spare_path_.c_str(), &old_record) == 0 && static_cast<std::size_t>(old_record.st_size) < capacity_) {
      reserve_spare(spare_path_, text);
    }
    return;
  }
  const int exchange_error = errno;
  // No record yet (the first write), or a filesystem without the exchange: the spare becomes the record, and a
  // new spare is reserved while there is room for it.
  if (exchange_error != ENOENT && exchange_error != EINVAL && exchange_error != ENOSYS &&
      exchange_error != EOPNOTSUPP) {
    throw_file_error("cannot replace", path_, exchange_error);
  }
  if (::rename(spare_path_.c_str(), path_.c_str()) != 0) throw_file_error("cannot replace", path_, errno);
  reserve_spare(spare_path_, text);
}

}  // namespace hfget::util
