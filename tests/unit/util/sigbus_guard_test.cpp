// SPDX-License-Identifier: MIT
#include "util/sigbus_guard.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>

#include "support/temp_dir.hpp"

namespace hfget::util {
namespace {

using test_support::TempDir;

const std::size_t kPage = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

// A file of `pages` pages mapped read-only, then truncated to 0 bytes: touching the mapping raises SIGBUS.
class TruncatedMapping {
 public:
  TruncatedMapping(const std::filesystem::path& path, std::size_t pages) : length_(pages * kPage) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0 || ::ftruncate(fd_, static_cast<off_t>(length_)) != 0) throw std::runtime_error("cannot create");
    address_ = ::mmap(nullptr, length_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (address_ == MAP_FAILED || ::ftruncate(fd_, 0) != 0) throw std::runtime_error("cannot map or truncate");
  }
  TruncatedMapping(const TruncatedMapping&) = delete;
  TruncatedMapping& operator=(const TruncatedMapping&) = delete;
  ~TruncatedMapping() {
    ::munmap(address_, length_);
    ::close(fd_);
  }

  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(address_), length_}; }

 private:
  std::size_t length_;
  int fd_ = -1;
  void* address_ = nullptr;
};

// Reads one byte the compiler cannot drop.
std::byte touch(const std::byte* address) {
  return *static_cast<const volatile std::byte*>(address);
}

// How a SIGBUS the guard does not own ends a test's child process: by the signal itself, or, under ASan or
// TSan, by the sanitizer's report ("BUS on unknown address", exit 66 under TSan). That relies on the default
// handle_sigbus=1 (scripts/test keeps it): the sanitizer installs its handler at start-up and lets us install
// ours over it, so the sanitizer's is the disposition we put back and the re-raised fault reaches it. (With
// handle_sigbus=2 it would silently refuse our handler.)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define EXPECT_DIES_OF_SIGBUS(statement) EXPECT_DEATH(statement, "BUS")
#else
#define EXPECT_DIES_OF_SIGBUS(statement) EXPECT_EXIT(statement, ::testing::KilledBySignal(SIGBUS), "")
#endif

TEST(SigbusGuard, ReturnsTrueWhenTheBodyReturns) {
  const std::byte data[4]{};
  bool ran = false;
  EXPECT_TRUE(run_with_sigbus_guard(std::span(data), [&] { ran = touch(&data[3]) == std::byte{0}; }));
  EXPECT_TRUE(ran);
}

TEST(SigbusGuard, ReturnsFalseWhenTheBodyFaultsInItsRange) {
  const TempDir dir;
  const TruncatedMapping mapping(dir / "f", 4);
  bool finished = false;
  EXPECT_FALSE(run_with_sigbus_guard(mapping.bytes(), [&] {
    touch(&mapping.bytes()[2 * kPage + 5]);
    finished = true;
  }));
  EXPECT_FALSE(finished);
  // The guard is reusable, and the signal mask was restored: a second fault is caught the same way.
  EXPECT_FALSE(run_with_sigbus_guard(mapping.bytes(), [&] { touch(&mapping.bytes()[0]); }));
}

TEST(SigbusGuard, CatchesAFaultInsideTheRangeOnly) {
  const TempDir dir;
  const TruncatedMapping mapping(dir / "f", 2);
  const std::byte elsewhere[1]{};
  EXPECT_TRUE(run_with_sigbus_guard(std::span(elsewhere), [] {}));  // the handler is installed
  EXPECT_DIES_OF_SIGBUS({
    [[maybe_unused]] const bool ignored =
        run_with_sigbus_guard(std::span(elsewhere), [&] { touch(&mapping.bytes()[0]); });
  });
}

TEST(SigbusGuard, AFaultWithNoGuardArmedStillEndsTheProcess) {
  const TempDir dir;
  const TruncatedMapping mapping(dir / "f", 2);
  const std::byte data[1]{};
  EXPECT_TRUE(run_with_sigbus_guard(std::span(data), [] {}));
  EXPECT_DIES_OF_SIGBUS(touch(&mapping.bytes()[kPage]));
}

TEST(SigbusGuard, ASigbusSentByKillIsNotSwallowed) {
  const std::byte data[1]{};
  EXPECT_TRUE(run_with_sigbus_guard(std::span(data), [] {}));
  EXPECT_DIES_OF_SIGBUS(::raise(SIGBUS));
}

TEST(SigbusGuard, AnExceptionFromTheBodyPropagatesAndDisarmsTheGuard) {
  const TempDir dir;
  const TruncatedMapping mapping(dir / "f", 2);
  EXPECT_THROW(
      {
        [[maybe_unused]] const bool ignored =
            run_with_sigbus_guard(mapping.bytes(), [] { throw std::runtime_error("stop"); });
      },
      std::runtime_error);
  // Nothing is left armed on this thread: the same fault now ends the process.
  EXPECT_DIES_OF_SIGBUS(touch(&mapping.bytes()[0]));
}

TEST(SigbusGuard, AGuardInsideAnotherCatchesItsOwnFaultAndTheOuterOneCarriesOn) {
  const TempDir dir;
  const TruncatedMapping mapping(dir / "f", 2);
  const std::byte data[1]{};
  bool inner_caught = false;
  EXPECT_TRUE(run_with_sigbus_guard(std::span(data), [&] {
    inner_caught = !run_with_sigbus_guard(mapping.bytes(), [&] { touch(&mapping.bytes()[0]); });
  }));
  EXPECT_TRUE(inner_caught);
}

}  // namespace
}  // namespace hfget::util
