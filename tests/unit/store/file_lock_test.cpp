// SPDX-License-Identifier: MIT
#include "store/file_lock.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <fstream>
#include <stop_token>

#include "hfget/error.hpp"
#include "support/temp_dir.hpp"
#include "util/unique_fd.hpp"

namespace hfget::store {
namespace {

using test_support::TempDir;

// Whether another open file description could take the lock right now (flock locks conflict between open
// file descriptions, even within one process).
bool lock_is_free(const std::filesystem::path& path) {
  const util::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd.valid()) return false;
  return ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0;  // released when fd closes
}

TEST(FileLock, AcquireTwiceSequentiallyWorks) {
  const TempDir dir;
  { const FileLock first = FileLock::acquire(dir / "a.lock", {}); }
  { const FileLock second = FileLock::acquire(dir / "a.lock", {}); }
  EXPECT_TRUE(std::filesystem::exists(dir / "a.lock"));
}

TEST(FileLock, HoldsAnExclusiveLockUntilDestroyed) {
  const TempDir dir;
  {
    const FileLock lock = FileLock::acquire(dir / "a.lock", {});
    EXPECT_FALSE(lock_is_free(dir / "a.lock"));
  }
  EXPECT_TRUE(lock_is_free(dir / "a.lock"));
}

TEST(FileLock, CreatesTheLockFileGroupWritable) {
  const TempDir dir;
  const FileLock lock = FileLock::acquire(dir / "a.lock", {});
  struct stat info {};
  ASSERT_EQ(::stat((dir / "a.lock").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777U, 0664U);
}

TEST(FileLock, RefusesASymlinkedLockFile) {
  const TempDir dir;
  std::ofstream(dir / "target") << "x";
  std::filesystem::create_symlink(dir / "target", dir / "a.lock");
  EXPECT_THROW((void)FileLock::acquire(dir / "a.lock", {}), Error);
}

TEST(FileLock, FailsInAMissingDirectory) {
  const TempDir dir;
  EXPECT_THROW((void)FileLock::acquire(dir / "missing" / "a.lock", {}), Error);
}

// A second acquire waits while the lock is held; a stop request ends that wait with kInterrupted.
TEST(FileLock, AcquireWhileHeldThrowsInterruptedWhenStopped) {
  const TempDir dir;
  const FileLock held = FileLock::acquire(dir / "a.lock", {});
  std::stop_source stop;
  stop.request_stop();
  try {
    (void)FileLock::acquire(dir / "a.lock", stop.get_token());
    FAIL() << "acquired a lock that is held";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInterrupted);
  }
}

TEST(FileLock, AcquireOfAFreeLockSucceedsEvenWhenStopped) {
  const TempDir dir;
  std::stop_source stop;
  stop.request_stop();
  EXPECT_NO_THROW((void)FileLock::acquire(dir / "a.lock", stop.get_token()));
}

}  // namespace
}  // namespace hfget::store
