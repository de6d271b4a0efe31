// SPDX-License-Identifier: MIT
#include "util/process_owner.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "util/read_text_file.hpp"
#include "util/thread_random.hpp"

namespace hfget::util {
namespace {

const std::string& host_name() {
  static const std::string name = [] {
    std::array<char, 256> buffer{};
    std::string host = ::gethostname(buffer.data(), buffer.size() - 1) == 0 ? buffer.data() : "host";
    host = host.substr(0, kMaxOwnerHostBytes);
    for (char& c : host) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    return host.empty() ? std::string("host") : host;
  }();
  return name;
}

bool recently_modified(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return false;
  const auto modified = std::chrono::system_clock::from_time_t(info.st_mtim.tv_sec);
  return std::chrono::system_clock::now() - modified < kForeignOwnerStaleAfter;
}

// The wall clock moves (NTP steps, the kernel's boot-time figure is whole seconds): a start time within this of
// a file's last write does not prove the process came later.
constexpr std::chrono::seconds kClockSlack{5};

std::optional<std::chrono::system_clock::time_point> boot_time() {
  const std::optional<std::string> stat = read_text_file("/proc/stat");
  if (!stat) return std::nullopt;
  const std::size_t line = stat->find("\nbtime ");
  if (line == std::string::npos) return std::nullopt;
  long long seconds = 0;
  if (std::sscanf(stat->c_str() + line + 7, "%lld", &seconds) != 1) return std::nullopt;
  return std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
}

// A process that started after the owner's files were last written is not their owner. False when it cannot be told (no
// file, no /proc): the owner is then presumed alive.
bool started_after_last_write(long pid, std::initializer_list<std::filesystem::path> files) {
  std::optional<std::chrono::system_clock::time_point> last_write;
  for (const std::filesystem::path& file : files) {
    struct stat info {};
    if (::stat(file.c_str(), &info) != 0) continue;
    const auto modified = std::chrono::system_clock::time_point(std::chrono::seconds(info.st_mtim.tv_sec) +
                                                                std::chrono::nanoseconds(info.st_mtim.tv_nsec));
    last_write = last_write ? std::max(*last_write, modified) : modified;
  }
  return last_write && started_after(pid, *last_write);
}

}  // namespace

std::optional<ProcessStat> read_process_stat(long pid) {
  const std::optional<std::string> stat = read_text_file(fmt::format("/proc/{}/stat", pid), 64 << 10);
  if (!stat) return std::nullopt;
  // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' are fixed:
  // state is field 3, starttime (clock ticks after boot) field 22 (proc(5)).
  const std::size_t name_end = stat->rfind(')');
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(stat->substr(name_end + 1));
  std::string field;
  if (!(fields >> field) || field.size() != 1) return std::nullopt;
  ProcessStat result{field[0], std::nullopt};
  for (int number = 4; number <= 22 && fields >> field; ++number) {
    if (number < 22) continue;
    const std::optional<std::chrono::system_clock::time_point> booted = boot_time();
    const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
    if (!booted || ticks_per_second <= 0) break;
    const unsigned long long ticks = std::strtoull(field.c_str(), nullptr, 10);
    result.started =
        *booted + std::chrono::milliseconds(ticks * 1000 / static_cast<unsigned long long>(ticks_per_second));
  }
  return result;
}

bool started_after(const ProcessStat& process, std::chrono::system_clock::time_point moment) {
  return process.started && *process.started > moment + kClockSlack;
}

bool started_after(long pid, std::chrono::system_clock::time_point moment) {
  const std::optional<ProcessStat> process = read_process_stat(pid);
  return process && started_after(*process, moment);
}

std::string new_owner_token() {
  static_assert(kOwnerRandomDigits == 8, "the format below writes a 32-bit random number");
  return fmt::format("{}-{}-{:08x}", host_name(), ::getpid(), static_cast<std::uint32_t>(thread_random()()));
}

std::optional<ProcessOwner> parse_owner_token(const std::string& text) {
  static const std::regex pattern(fmt::format("([A-Za-z0-9_]{{1,{}}})-([0-9]{{1,{}}})-[0-9a-f]{{{}}}",
                                              kMaxOwnerHostBytes, kMaxOwnerPidDigits, kOwnerRandomDigits));
  std::smatch match;
  if (!std::regex_match(text, match, pattern)) return std::nullopt;
  return ProcessOwner{match[1].str(), std::stol(match[2].str())};
}

bool owner_may_be_alive(const ProcessOwner& owner, std::initializer_list<std::filesystem::path> files) {
  if (owner.host == host_name()) {
    const bool exists = ::kill(static_cast<pid_t>(owner.pid), 0) == 0 || errno == EPERM;
    return exists && !started_after_last_write(owner.pid, files);
  }
  for (const std::filesystem::path& file : files) {
    if (recently_modified(file)) return true;
  }
  return false;
}

}  // namespace hfget::util
