// SPDX-License-Identifier: MIT
// Reading a file through a memory mapping turns two ordinary read errors into a signal: when the file shrinks
// while mapped (another process truncates or rewrites it), touching a page past its new end raises SIGBUS,
// and so does a page the device cannot read (EIO). Unhandled, SIGBUS ends the process with no word about the
// file. This guard turns it back into a return value the caller can report, for the range it was armed with
// and the thread that armed it; every other SIGBUS still ends the process as before.
#pragma once

#include <cstddef>
#include <span>

namespace hfget::util {

/// Runs `body(context)` on this thread with a SIGBUS guard over `range`. Returns true when `body` returned,
/// false when it touched `range` and the kernel raised SIGBUS for it: `body` is then abandoned at the
/// faulting access, and whatever it was updating (a hash, a buffer) is half done and must be discarded.
/// Exceptions thrown by `body` propagate, and the guard is withdrawn on every way out.
///
/// The abandon is a siglongjmp out of the signal handler, past `body`'s frames; C++ leaves that undefined
/// when a skipped frame holds an object with a non-trivial destructor. So `body` must read `range` with no
/// such object alive in any frame below this call (hashing the bytes, copying them into a buffer sized
/// beforehand: fine; appending them to a growing std::string or vector: not).
///
/// Installs hfget's SIGBUS handler once per process (the disposition found then is kept and restored for any
/// SIGBUS that is not ours). Guards nest; each thread has its own.
[[nodiscard]] bool run_with_sigbus_guard(std::span<const std::byte> range, void (*body)(const void*),
                                         const void* context);

/// The same for a callable: `body()`.
template <typename Body>
[[nodiscard]] bool run_with_sigbus_guard(std::span<const std::byte> range, const Body& body) {
  return run_with_sigbus_guard(
      range, [](const void* context) { (*static_cast<const Body*>(context))(); }, &body);
}

}  // namespace hfget::util
