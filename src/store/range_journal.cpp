// SPDX-License-Identifier: MIT
#include "store/range_journal.hpp"

#include <fcntl.h>
#include <fmt/format.h>
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
  nlohmann::json header{{"format_version", 1}, {"size", file_size_}, {"etag", etag_}};
  if (validator_) header["validator"] = {{"origin", validator_->origin}, {"etag", validator_->etag}};
  // The validator is a server's ETag: any bytes. Replaced where not UTF-8 (then it never matches again,
  // which only costs a restart), never a throw from the writer.
  return header.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

// A journal line naming the ETag of the bytes recorded: "validator <origin> <etag>". ETags and origins hold
// no spaces (RFC 9110 etagc, scheme://host:port).
constexpr std::string_view kValidatorTag = "validator";

// The header names the file version the ranges belong to; the validator is optional (older journals and
// servers that send no ETag have none).
bool header_matches(const std::string& line, std::uint64_t file_size, const std::string& etag,
                    std::optional<BodyValidator>& validator) {
  const nlohmann::json header = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!header.is_object() || header.value("format_version", 0) != 1) return false;
  const auto size = header.find("size");
  const auto name = header.find("etag");
  if (size == header.end() || !size->is_number_unsigned() || size->get<std::uint64_t>() != file_size) return false;
  if (name == header.end() || !name->is_string() || name->get<std::string>() != etag) return false;
  if (const auto found = header.find("validator"); found != header.end()) {
    const auto origin = found->find("origin");
    const auto tag = found->find("etag");
    if (!found->is_object() || origin == found->end() || tag == found->end() || !origin->is_string() ||
        !tag->is_string()) {
      return false;
    }
    validator = BodyValidator{origin->get<std::string>(), tag->get<std::string>()};
  }
  return true;
}

}  // namespace

RangeJournal RangeJournal::open(std::filesystem::path path, std::uint64_t file_size, std::string etag,
                                std::uint64_t prefix_bytes) {
  RangeJournal journal(std::move(path), file_size, std::move(etag));
  std::ifstream in(journal.path_, std::ios::binary);
  if (!in) {
    merge_range(journal.completed_, {0, std::min(prefix_bytes, file_size)});
    return journal;
  }
  std::string line;
  // Another version of the file, or a damaged header: trust nothing.
  if (!std::getline(in, line) || !header_matches(line, file_size, journal.etag_, journal.validator_)) {
    journal.validator_.reset();
    return journal;
  }
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline: a line torn by a kill, ignored
    std::istringstream fields(line);
    if (line.rfind(kValidatorTag, 0) == 0) {
      std::string tag;
      BodyValidator validator;
      if (!(fields >> tag >> validator.origin >> validator.etag)) {
        journal.completed_.clear();
        return journal;
      }
      journal.validator_ = std::move(validator);
      continue;
    }
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
  append_line(std::to_string(range.begin) + " " + std::to_string(range.end) + "\n");
}

void RangeJournal::append_line(const std::string& line) {
  // One write() of a short line to an O_APPEND file: after a kill it is there whole, or torn and ignored.
  if (::write(append_fd_.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    util::throw_file_error("cannot write", path_, errno);
  }
}

void RangeJournal::set_validator(BodyValidator validator) {
  validator_ = std::move(validator);
  if (!append_fd_.valid()) {
    persist();
    return;
  }
  // Appended like a range (one write()), not a rewrite: no temporary a kill -9 could leave behind.
  append_line(fmt::format("{} {} {}\n", kValidatorTag, validator_->origin, validator_->etag));
}

void RangeJournal::reset(std::optional<BodyValidator> validator) {
  completed_.clear();
  validator_ = std::move(validator);
  persist();
}

void RangeJournal::persist() {
  std::string content = header();
  for (const ByteRange& range : completed_)
    content += std::to_string(range.begin) + " " + std::to_string(range.end) + "\n";
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
