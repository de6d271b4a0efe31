// SPDX-License-Identifier: MIT
#include "util/descriptor_table.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

namespace hfget::util {
namespace {

constexpr rlim_t kDescriptors = 1024;

}  // namespace

void reserve_descriptor_table() noexcept {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t room = std::min(limit.rlim_cur, kDescriptors);
  if (room < 2) return;
  // A descriptor at the top of the room grows the table to hold it; closed, it leaves the table as grown.
  const int any = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (any < 0) return;
  const int top = ::fcntl(any, F_DUPFD_CLOEXEC, static_cast<int>(room - 1));
  if (top >= 0) ::close(top);
  ::close(any);
}

}  // namespace hfget::util
