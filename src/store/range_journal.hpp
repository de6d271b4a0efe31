// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/unique_fd.hpp"

namespace hfget::store {

/// A half-open byte range [begin, end).
struct ByteRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t size() const noexcept { return end - begin; }
  bool operator==(const ByteRange&) const = default;
};

/// The strong ETag the body server sent with the recorded bytes, and the origin (scheme://host:port) that
/// sent it: ETags of different servers (the Hub, one CDN or another after a re-resolve) are not comparable.
struct BodyValidator {
  std::string origin;
  std::string etag;
  bool operator==(const BodyValidator&) const = default;
};

/// Which ranges of a partial file hold downloaded bytes, so a download over several connections resumes
/// exactly after kill -9: a range is recorded right after its bytes were written, so a kill loses only what
/// was still in the socket. Lives next to the partial file (*.hfget-journal): a header line, then one
/// "begin end" line appended per written range (one small write(), cheap enough for every block received;
/// a torn last line is ignored) and a "validator <origin> <etag>" line once the server's ETag is known,
/// compacted on open. It is created before the first byte is written: a
/// partial file without a journal is a contiguous prefix (what single-stream downloads leave), never a file
/// with holes. Not fsynced: after a power loss the hash check catches any range that did not reach the disk.
class RangeJournal {
 public:
  /// Reads the journal at `path` if it describes a file of this size and etag; otherwise (missing, damaged,
  /// another version of the file) starts empty. `prefix_bytes` is used when there is no journal at all.
  static RangeJournal open(std::filesystem::path path, std::uint64_t file_size, std::string etag,
                           std::uint64_t prefix_bytes);

  const std::vector<ByteRange>& completed() const noexcept { return completed_; }
  std::uint64_t completed_bytes() const noexcept;
  /// End of the contiguous completed run that starts at byte 0.
  std::uint64_t contiguous_prefix() const noexcept;
  /// What is still missing, in order.
  std::vector<ByteRange> missing() const;
  /// The ETag the recorded bytes were served with, if the server sent one.
  const std::optional<BodyValidator>& validator() const noexcept { return validator_; }
  /// Records the ETag of the bytes being written (rewrites the journal, keeping the ranges).
  void set_validator(BodyValidator validator);

  /// Records a written range (merging neighbours) and appends it to the journal file.
  void add(ByteRange range);
  /// Forgets every range (the file starts over) and rewrites the journal file; `validator` is the one the
  /// new bytes will come with (nullopt: not known yet).
  void reset(std::optional<BodyValidator> validator = std::nullopt);
  /// Rewrites the journal file compacted (creating it), even if nothing is recorded yet, and opens it for
  /// appending.
  void persist();
  /// Deletes the journal file (after the file was published).
  void remove();

 private:
  RangeJournal(std::filesystem::path path, std::uint64_t file_size, std::string etag)
      : path_(std::move(path)), file_size_(file_size), etag_(std::move(etag)) {}
  std::string header() const;
  void append_line(const std::string& line);

  std::filesystem::path path_;
  std::uint64_t file_size_;
  std::string etag_;
  std::optional<BodyValidator> validator_;
  std::vector<ByteRange> completed_;  // sorted, disjoint, not adjacent
  util::UniqueFd append_fd_;          // open after persist()
};

/// Adds `range` to the sorted, disjoint list `ranges`, merging overlaps and neighbours.
void merge_range(std::vector<ByteRange>& ranges, ByteRange range);

}  // namespace hfget::store
