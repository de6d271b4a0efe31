// SPDX-License-Identifier: MIT
#pragma once

#include <sys/wait.h>
#include <unistd.h>

namespace hfget::test_support {

/// A PID that existed a moment ago and no longer does: a child that has exited and been reaped. (It could be
/// reused before the test reads it, which the kernel makes unlikely: PIDs are handed out in increasing order.)
inline long dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

}  // namespace hfget::test_support
