// SPDX-License-Identifier: MIT
#include "util/sigbus_guard.hpp"

#include <fmt/format.h>
#include <setjmp.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "hfget/error.hpp"

namespace hfget::util {
namespace {

// What a thread has armed: the addresses it reads through a mapping, and where to jump back to.
struct ArmedRange {
  std::uintptr_t begin;
  std::uintptr_t end;
  sigjmp_buf* resume;
};

// This thread's innermost armed range, or null. The kernel runs the handler on the thread whose access
// faulted, so a thread_local is what the handler must read. constinit and trivially destructible, it needs
// no initialisation call (which would not be async-signal-safe); lock-free atomic, so the store is neither
// reordered around the reads of the mapping nor torn when the handler reads it.
constinit thread_local std::atomic<const ArmedRange*> t_armed{nullptr};

// The SIGBUS disposition found at installation, put back for a SIGBUS that is not ours. Written once, before
// our handler is installed; only read afterwards.
struct sigaction g_previous_action {};
std::once_flag g_install_once;

void on_sigbus(int signal_number, siginfo_t* info, void* /*ucontext*/) {
  const ArmedRange* armed = t_armed.load();
  // si_code > 0: the kernel raised it for an access of this thread (kill() and sigqueue() give <= 0, and
  // their si_addr means nothing).
  if (armed != nullptr && info != nullptr && info->si_code > 0) {
    const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
    // Back into run_with_sigbus_guard's sigsetjmp, which restores the signal mask (SIGBUS is blocked here).
    if (address >= armed->begin && address < armed->end) siglongjmp(*armed->resume, 1);
  }
  // Not ours: put back the disposition that was there before and return. The faulting access runs again
  // and raises SIGBUS under it: by default the process ends with a core dump as if we had never been here;
  // under ASan, ASan reports it. A SIGBUS sent by kill() would not come back by itself, so it is raised
  // again; it stays blocked, then pending, until this handler returns.
  ::sigaction(signal_number, &g_previous_action, nullptr);
  if (info == nullptr || info->si_code <= 0) ::raise(signal_number);
}

void install_handler() {
  // Read the old disposition first, so that it is in place before the handler can run on any thread.
  if (::sigaction(SIGBUS, nullptr, &g_previous_action) != 0) {
    throw Error(ErrorCode::kInternal, fmt::format("cannot read the SIGBUS disposition: {}", std::strerror(errno)));
  }
  struct sigaction action {};
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  if (::sigaction(SIGBUS, &action, nullptr) != 0) {
    throw Error(ErrorCode::kInternal, fmt::format("cannot install the SIGBUS handler: {}", std::strerror(errno)));
  }
}

// Publishes a range to the handler for the scope's lifetime and withdraws it however the scope ends: by
// returning, by the jump back to sigsetjmp (which lands within this lifetime: the scope is built first), or
// by an exception from the body (an interruption, say). Restores the outer range, so guards nest.
class ArmedScope {
 public:
  explicit ArmedScope(const ArmedRange& range) noexcept : outer_(t_armed.exchange(&range)) {}
  ArmedScope(const ArmedScope&) = delete;
  ArmedScope& operator=(const ArmedScope&) = delete;
  ~ArmedScope() { t_armed.store(outer_); }

 private:
  const ArmedRange* outer_;
};

}  // namespace

bool run_with_sigbus_guard(std::span<const std::byte> range, void (*body)(const void*), const void* context) {
  std::call_once(g_install_once, install_handler);
  sigjmp_buf resume;
  const auto begin = reinterpret_cast<std::uintptr_t>(range.data());
  const ArmedRange armed{begin, begin + range.size(), &resume};
  const ArmedScope scope(armed);
  // From here to the end of body(), nothing with a non-trivial destructor is created in this frame (see the
  // header for body's own frames): the jump back abandons frames without unwinding them. Nothing is assigned
  // after sigsetjmp and read after a jump back, so no local can be clobbered.
  if (sigsetjmp(resume, 1) != 0) return false;
  body(context);
  return true;
}

}  // namespace hfget::util
