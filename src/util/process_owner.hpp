// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace hfget::util {

/// Names of files that belong to one process — partial files, temporaries — carry an owner token,
/// "<host>-<pid>-<random>", so a later run can tell the leftovers of a process that is gone (safe to claim or
/// delete) from the files of one still writing them, even where file locks do not work (NFS, Lustre).
/// <host> has letters, digits and '_' only: a token contains no '.', so no other name passes for one.
struct ProcessOwner {
  std::string host;
  long pid = 0;
};

/// A token's parts: the host name cut to kMaxOwnerHostBytes, the PID in decimal, kOwnerRandomDigits hex digits.
inline constexpr std::size_t kMaxOwnerHostBytes = 32;
inline constexpr std::size_t kMaxOwnerPidDigits = 10;  // a 32-bit PID
inline constexpr std::size_t kOwnerRandomDigits = 8;
/// The longest token, with its two '-'. Names that carry a token leave this much room for it within a file
/// name's 255 bytes.
inline constexpr std::size_t kMaxOwnerTokenBytes = kMaxOwnerHostBytes + 1 + kMaxOwnerPidDigits + 1 + kOwnerRandomDigits;

/// A new token for this process (the random part differs on every call).
std::string new_owner_token();
/// nullopt unless `text` is exactly a token.
std::optional<ProcessOwner> parse_owner_token(const std::string& text);

/// How long a file written from another host stays untouched before its owner counts as gone: that owner
/// cannot be asked, and a live download rewrites its files many times a minute.
inline constexpr std::chrono::minutes kForeignOwnerStaleAfter{10};

/// Whether the owner may still be writing: a process of this host that exists and started before `files` were
/// last written (a PID reused after a reboot names another process), or, for another host, one of `files`
/// modified within kForeignOwnerStaleAfter.
bool owner_may_be_alive(const ProcessOwner& owner, std::initializer_list<std::filesystem::path> files);

/// What /proc says of a process of this host.
struct ProcessStat {
  char state = '?';                                              // 'Z': a zombie, gone but not reaped
  std::optional<std::chrono::system_clock::time_point> started;  // by the wall clock
};
/// nullopt when there is no such process, or /proc does not show it.
std::optional<ProcessStat> read_process_stat(long pid);

/// True when the process started more than a few seconds after `moment`: it cannot be a process that was
/// already running then. PIDs are reused, after a reboot above all. False when that cannot be told.
bool started_after(const ProcessStat& process, std::chrono::system_clock::time_point moment);
bool started_after(long pid, std::chrono::system_clock::time_point moment);

}  // namespace hfget::util
