// SPDX-License-Identifier: MIT
#include "store/range_journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "util/atomic_file.hpp"

namespace hfget::store {

void merge_range(std::vector<ByteRange>& ranges, ByteRange range) {
  if (range.end <= range.begin) return;
  std::vector<ByteRange> merged;
  merged.reserve(ranges.size() + 1);
  bool placed = false;
  for (const ByteRange& existing : ranges) {
    if (existing.end < range.begin) {
      merged.push_back(existing);
    } else if (range.end < existing.begin) {
      if (!placed) {
        merged.push_back(range);
        placed = true;
      }
      merged.push_back(existing);
    } else {
      range = {std::min(range.begin, existing.begin), std::max(range.end, existing.end)};
    }
  }
  if (!placed) merged.push_back(range);
  std::sort(merged.begin(), merged.end(), [](const ByteRange& a, const ByteRange& b) { return a.begin < b.begin; });
  ranges = std::move(merged);
}

std::string RangeJournal::header() const {
  return nlohmann::json({{"format_version", 1}, {"size", file_size_}, {"etag", etag_}}).dump() + "\n";
}

RangeJournal RangeJournal::open(std::filesystem::path path, std::uint64_t file_size, std::string etag,
                                std::uint64_t prefix_bytes) {
  RangeJournal journal(std::move(path), file_size, std::move(etag));
  std::ifstream in(journal.path_, std::ios::binary);
  if (!in) {
    merge_range(journal.completed_, {0, std::min(prefix_bytes, file_size)});
    return journal;
  }
  std::string line;
  if (!std::getline(in, line) || line + "\n" != journal.header()) return journal;  // another version: trust nothing
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline: a line torn by a kill, ignored
    std::istringstream fields(line);
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
    if (!(fields >> begin >> end) || end > file_size) {
      journal.completed_.clear();
      return journal;
    }
    merge_range(journal.completed_, {begin, end});
  }
  return journal;
}

std::uint64_t RangeJournal::completed_bytes() const noexcept {
  std::uint64_t total = 0;
  for (const ByteRange& range : completed_) total += range.size();
  return total;
}

std::uint64_t RangeJournal::contiguous_prefix() const noexcept {
  return !completed_.empty() && completed_.front().begin == 0 ? completed_.front().end : 0;
}

std::vector<ByteRange> RangeJournal::missing() const {
  std::vector<ByteRange> gaps;
  std::uint64_t cursor = 0;
  for (const ByteRange& range : completed_) {
    if (range.begin > cursor) gaps.push_back({cursor, range.begin});
    cursor = std::max(cursor, range.end);
  }
  if (cursor < file_size_) gaps.push_back({cursor, file_size_});
  return gaps;
}

void RangeJournal::add(ByteRange range) {
  if (range.end <= range.begin) return;
  merge_range(completed_, range);
  if (!append_fd_.valid()) {
    persist();
    return;
  }
  const std::string line = std::to_string(range.begin) + " " + std::to_string(range.end) + "\n";
  // One write() of a short line to an O_APPEND file: after a kill it is there whole, or torn and ignored.
  if (::write(append_fd_.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    util::throw_file_error("cannot write", path_, errno);
  }
}

void RangeJournal::reset() {
  completed_.clear();
  persist();
}

void RangeJournal::persist() {
  std::string content = header();
  for (const ByteRange& range : completed_) content += std::to_string(range.begin) + " " + std::to_string(range.end) + "\n";
  util::write_file_atomically(path_, content, /*durable=*/false);
  append_fd_.reset(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW));
  if (!append_fd_.valid()) util::throw_file_error("cannot open", path_, errno);
}

void RangeJournal::remove() {
  append_fd_.reset();
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
}

}  // namespace hfget::store
