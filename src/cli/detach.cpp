// SPDX-License-Identifier: MIT
// The classic double fork: the first child calls setsid() to leave the launcher's session (and the SSH
// session's terminal), the grandchild is not a session leader so it can never acquire a terminal again.
// The launcher waits only for a PID through a pipe, then returns; nothing it hands down keeps the caller's
// stdout open, which is what makes ssh hang with `nohup … &`.
//
// fork() copies only the calling thread: a lock another thread held stays locked for ever in the child. The
// checks before detaching run no thread of their own, and libcurl's threaded resolver joins its lookup
// thread when the lookup completes; only a lookup abandoned after a timeout finishes alone, so the fork
// waits (bounded) until this process is down to its one thread.
#include "cli/detach.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "hfget/error.hpp"
#include "hfget/run_record.hpp"
#include "util/descriptor_table.hpp"

namespace hfget::cli {
namespace {

// Threads of this process, as /proc lists them (0 when /proc cannot be read: nothing to wait for then).
std::size_t thread_count() {
  std::error_code error;
  std::size_t count = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", error), end; !error && it != end;
       it.increment(error)) {
    ++count;
  }
  return count;
}

void wait_until_single_threaded() {
  // A resolver thread's lookup ends within the resolver's own timeouts (seconds); 30 s is far past them.
  for (int waited = 0; waited < 300 && thread_count() > 1; ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (thread_count() > 1) {
    throw Error(ErrorCode::kInternal, "cannot detach: a name lookup of the checks is still running; run it again");
  }
}

// The launcher's side: the daemon's PID arrives through the pipe (bounded wait), then the first child is reaped.
int report_daemon(int read_end, pid_t first_child, const std::filesystem::path& log, const Announcement& announcement) {
  std::string text;
  pollfd poll_fd{read_end, POLLIN, 0};
  char buffer[64];
  while (::poll(&poll_fd, 1, 5000) > 0) {
    const ssize_t n = ::read(read_end, buffer, sizeof(buffer));
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(read_end);
  int status = 0;
  ::waitpid(first_child, &status, 0);
  if (text.empty()) throw Error(ErrorCode::kInternal, "could not start the background download");
  // stdout holds the result only, as without --detach: the path the download fills.
  fmt::print("{}\n", announcement.path.string());
  std::fflush(stdout);
  if (!announcement.quiet) {
    std::fputs(fmt::format("hfget: downloading in the background: PID {}, log {}\n", text, log.string()).c_str(),
               stderr);
  }
  return 0;
}

[[noreturn]] void fail_in_child(const char* what) {
  // Nothing else to tell: the launcher sees the pipe close without a PID.
  static_cast<void>(what);
  _exit(1);
}

}  // namespace

std::optional<int> detach_into_background(const std::filesystem::path& log, const std::filesystem::path& state_dir,
                                          const Announcement& announcement) {
  wait_until_single_threaded();
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw Error(ErrorCode::kInternal, fmt::format("cannot detach: pipe: {}", std::strerror(errno)));
  }
  std::fflush(nullptr);
  const pid_t first = ::fork();
  if (first < 0) throw Error(ErrorCode::kInternal, fmt::format("cannot detach: fork: {}", std::strerror(errno)));
  if (first > 0) {
    ::close(pipe_fds[1]);
    return report_daemon(pipe_fds[0], first, log, announcement);
  }

  // First child: a new session, then fork again and leave.
  ::close(pipe_fds[0]);
  if (::setsid() < 0) fail_in_child("setsid");
  const pid_t second = ::fork();
  if (second < 0) fail_in_child("fork");
  if (second > 0) _exit(0);

  // The daemon.
  std::signal(SIGHUP, SIG_IGN);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (null_fd < 0 || log_fd < 0) fail_in_child("open");
  if (::dup2(null_fd, STDIN_FILENO) < 0 || ::dup2(log_fd, STDOUT_FILENO) < 0 || ::dup2(log_fd, STDERR_FILENO) < 0) {
    fail_in_child("dup2");
  }
  try {
    write_detached_launch(state_dir, static_cast<long>(::getpid()), log);
  } catch (const std::exception&) {
    fail_in_child("state");
  }
  const std::string pid = std::to_string(::getpid());
  [[maybe_unused]] const ssize_t written = ::write(pipe_fds[1], pid.data(), pid.size());
  // Everything inherited beyond 0-2 goes, the pipe included: the launcher sees EOF and returns.
  ::close_range(3, ~0U, 0);
  util::reserve_descriptor_table();  // fork() cut the table to the descriptors open; no thread runs yet
  return std::nullopt;
}

}  // namespace hfget::cli
