// SPDX-License-Identifier: MIT
// An append-only log rather than one JSON document: publishing a file adds one line (a single write under
// O_APPEND, so concurrent runs that ignore the target lock do not tear each other's lines), where rewriting
// a document would cost O(files) per file for a dataset of 100,000 files. A torn last line (a crash mid-write)
// or any line that does not parse is ignored: the file it was about is then hashed again, never trusted.
#include "store/published_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hfget/error.hpp"
#include "util/read_text_file.hpp"
#include "util/unique_fd.hpp"

namespace hfget::store {
namespace {

// 100,000 files at ~250 bytes a line, many times over; past it the record is not read (and vouches for
// nothing) rather than read without bound.
constexpr std::uint64_t kMaxRecordBytes = 256ULL << 20;

std::int64_t nanoseconds(const timespec& time) {
  return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
}

std::optional<std::uint64_t> unsigned_field(const nlohmann::json& line, const char* key) {
  const auto it = line.find(key);
  if (it == line.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<std::uint64_t>();
}

std::optional<std::int64_t> signed_field(const nlohmann::json& line, const char* key) {
  const auto it = line.find(key);
  if (it == line.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

}  // namespace

std::optional<FileIdentity> FileIdentity::of(const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return FileIdentity{static_cast<std::uint64_t>(info.st_dev), static_cast<std::uint64_t>(info.st_ino),
                      static_cast<std::uint64_t>(info.st_size), nanoseconds(info.st_mtim), nanoseconds(info.st_ctim)};
}

PublishedFiles::PublishedFiles(std::filesystem::path state_dir) : path_(std::move(state_dir) / "published.jsonl") {
  const std::optional<std::string> text = util::read_text_file(path_, kMaxRecordBytes);
  if (!text) return;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json data = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (data.is_discarded() || !data.is_object()) continue;
    const auto path = data.find("path");
    const auto etag = data.find("etag");
    if (path == data.end() || !path->is_string() || etag == data.end() || !etag->is_string()) continue;
    const auto device = unsigned_field(data, "dev");
    const auto inode = unsigned_field(data, "ino");
    const auto size = unsigned_field(data, "size");
    const auto mtime = signed_field(data, "mtime_ns");
    const auto ctime = signed_field(data, "ctime_ns");
    if (!device || !inode || !size || !mtime || !ctime) continue;
    put(path->get<std::string>(), Entry{etag->get<std::string>(), {*device, *inode, *size, *mtime, *ctime}});
  }
}

void PublishedFiles::put(const std::string& repo_path, Entry entry) {
  const auto [it, added] = entries_.try_emplace(repo_path);
  if (!added && it->second.etag != entry.etag) {
    const auto old = paths_by_etag_.find(it->second.etag);
    old->second.erase(repo_path);
    if (old->second.empty()) paths_by_etag_.erase(old);
  }
  paths_by_etag_[entry.etag].insert(repo_path);
  it->second = std::move(entry);
}

bool PublishedFiles::vouches_for(const std::string& repo_path, const std::string& etag,
                                 const std::filesystem::path& file) const {
  const std::lock_guard lock(mutex_);
  const auto entry = entries_.find(repo_path);
  if (entry == entries_.end() || entry->second.etag != etag) return false;
  const std::optional<FileIdentity> identity = FileIdentity::of(file);
  return identity && *identity == entry->second.identity;
}

std::vector<std::string> PublishedFiles::paths_with_etag(const std::string& etag) const {
  const std::lock_guard lock(mutex_);
  const auto paths = paths_by_etag_.find(etag);
  if (paths == paths_by_etag_.end()) return {};
  return {paths->second.begin(), paths->second.end()};
}

void PublishedFiles::record(const std::string& repo_path, const std::string& etag, const std::filesystem::path& file) {
  const std::optional<FileIdentity> identity = FileIdentity::of(file);
  if (!identity) {
    throw Error(ErrorCode::kInternal, fmt::format("{}: not a regular file after publishing it", file.string()), file);
  }
  const nlohmann::json data = {{"path", repo_path},
                               {"etag", etag},
                               {"size", identity->size},
                               {"dev", identity->device},
                               {"ino", identity->inode},
                               {"mtime_ns", identity->mtime_ns},
                               {"ctime_ns", identity->ctime_ns}};
  const std::string line = data.dump(-1, ' ', /*ensure_ascii=*/true) + "\n";
  const std::lock_guard lock(mutex_);
  const util::UniqueFd fd(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666));
  if (!fd.valid() || ::write(fd.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    const int error = errno;
    throw Error(error == ENOSPC || error == EDQUOT ? ErrorCode::kDiskFull : ErrorCode::kInternal,
                fmt::format("cannot append to {}: {}", path_.string(), std::strerror(error)), path_);
  }
  put(repo_path, Entry{etag, *identity});
}

}  // namespace hfget::store
