// SPDX-License-Identifier: MIT
#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <string>

#include "hfget/error.hpp"
#include "util/process_owner.hpp"
#include "util/unique_fd.hpp"

namespace hfget::util {

void throw_file_error(const std::string& what, const std::filesystem::path& path, int error_number) {
  const bool full = error_number == ENOSPC || error_number == EDQUOT;
  throw Error(full ? ErrorCode::kDiskFull : ErrorCode::kInternal,
              fmt::format("{} '{}': {}", what, path.string(), std::strerror(error_number)), path);
}

namespace {

// A temporary lives for milliseconds between its creation and its rename. One whose owner is gone is a
// leftover; one whose owner may be alive may be another process's write in flight (where the target lock
// does not work, two runs can share a folder), so it is left alone unless it is a minute old.
bool is_stale_temporary(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  // ".<name>.<owner>.hfget-tmp"
  const std::string stem = name.substr(0, name.size() - kTemporarySuffix.size());
  const std::size_t dot = stem.rfind('.');
  if (dot != std::string::npos) {
    if (const std::optional<ProcessOwner> owner = parse_owner_token(stem.substr(dot + 1))) {
      if (!owner_may_be_alive(*owner, {path})) return true;
    }
  }
  std::error_code error;
  const auto modified = std::filesystem::last_write_time(path, error);
  return !error && std::filesystem::file_time_type::clock::now() - modified > std::chrono::minutes(1);
}

}  // namespace

std::filesystem::path temporary_path_beside(const std::filesystem::path& path) {
  // A repo's file names may be NAME_MAX (255) bytes long, the most a name may have: the name part is cut to
  // leave room for the owner and the suffix, which are what the sweep reads.
  const std::string owner_and_suffix = fmt::format(".{}{}", new_owner_token(), kTemporarySuffix);
  std::string name = path.filename().string();
  name.resize(std::min(name.size(), NAME_MAX - 1 - owner_and_suffix.size()));
  return path.parent_path() / ("." + name + owner_and_suffix);
}

void remove_stale_temporaries(const std::filesystem::path& directory) {
  std::error_code error;
  std::filesystem::recursive_directory_iterator it(directory, error);
  for (; !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() > kTemporarySuffix.size() && name.ends_with(kTemporarySuffix) && !it->is_directory() &&
        is_stale_temporary(it->path())) {
      std::error_code ignored;
      std::filesystem::remove(it->path(), ignored);
    }
  }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content, bool durable) {
  const std::filesystem::path temporary = temporary_path_beside(path);
  util::UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666));
  if (!fd.valid()) throw_file_error("cannot create", temporary, errno);
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd.get(), content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::unlink(temporary.c_str());
      throw_file_error("cannot write", temporary, error);
    }
    written += static_cast<std::size_t>(n);
  }
  if ((durable && ::fdatasync(fd.get()) != 0) || ::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throw_file_error("cannot write", path, error);
  }
}

}  // namespace hfget::util
