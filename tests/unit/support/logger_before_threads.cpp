// SPDX-License-Identifier: MIT
// The hfget binary sets its logger in main(), before any thread; the test binary has no such main, so the
// first spdlog call may come from two download connections at once. spdlog's registry is then built inside
// libspdlog.so, which ThreadSanitizer cannot see into: it misses the static-local guard and reports the
// registry's allocation racing with the other connection's level check (a report with no race behind it,
// reproduced with 8 threads calling spdlog::debug first). Building the registry here, before main() and so
// before any test starts a thread, gives the tests the order the binary has.
#include <spdlog/spdlog.h>

namespace {
[[maybe_unused]] const spdlog::logger* const kLoggerBuiltBeforeAnyThread = spdlog::default_logger_raw();
}  // namespace
