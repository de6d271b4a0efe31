// SPDX-License-Identifier: MIT
#include "transfer/local_chunks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <string_view>
#include <utility>

#include "store/chunk_layout_records.hpp"
#include "util/unique_fd.hpp"

namespace hfget::transfer {

void LocalChunks::add_from_target(const store::Layout& layout, const std::vector<PlannedFile>& plan) {
  std::set<std::string> replaced;
  for (const PlannedFile& planned : plan) {
    if (planned.replace && planned.file.lfs_sha256) replaced.insert(*planned.file.lfs_sha256);
  }
  for (store::ChunkLayoutRecord& record : store::load_chunk_layouts(layout.state_dir())) {
    if (replaced.count(record.sha256) != 0) continue;
    if (std::optional<std::filesystem::path> path = layout.find_content(record.sha256, record.layout.file_size)) {
      add(std::move(*path), std::move(record.layout));
    }
  }
}

bool LocalChunks::empty() const {
  std::shared_lock guard(mutex_);
  return files_.empty();
}

std::size_t LocalChunks::files() const {
  std::shared_lock guard(mutex_);
  return files_.size();
}

void LocalChunks::add(std::filesystem::path path, xet::ChunkLayout chunk_layout) {
  const std::optional<store::FileIdentity> identity = store::FileIdentity::of(path);
  if (!identity || chunk_layout.runs.empty()) return;
  std::unique_lock guard(mutex_);
  const std::size_t index = files_.size();
  files_.push_back({std::move(path), *identity, std::move(chunk_layout)});
  std::set<std::string_view> xorbs;
  for (const xet::ChunkRun& run : files_.back().layout.runs) {
    if (xorbs.insert(run.xorb_hash).second) files_by_xorb_.emplace(run.xorb_hash, index);
  }
}

void LocalChunks::forget(const Span& found) {
  std::unique_lock guard(mutex_);
  std::erase_if(files_by_xorb_, [&](const auto& entry) { return &files_[entry.second].identity == found.identity; });
}

std::optional<LocalChunks::Span> LocalChunks::find(const xet::Term& term) const {
  std::shared_lock guard(mutex_);
  const auto [first, last] = files_by_xorb_.equal_range(term.xorb_hash);
  for (auto it = first; it != last; ++it) {
    const File& file = files_[it->second];
    const std::optional<xet::FileSpan> span = file.layout.find(term.xorb_hash, term.chunk_begin, term.chunk_end);
    // The same chunks decode to the same bytes: lengths that disagree with the term are a record (or a CAS)
    // that is wrong, and copying on its word would only fail the hash.
    if (span && span->bytes == term.data_bytes) return Span{&file.path, &file.identity, *span};
  }
  return std::nullopt;
}

namespace {

// The whole of [offset, offset + out.size()) or false (a short read: the file shrank since it was checked).
bool read_exactly(int fd, std::uint64_t offset, std::span<std::byte> out) {
  while (!out.empty()) {
    const ssize_t got = ::pread(fd, out.data(), out.size(), static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out = out.subspan(static_cast<std::size_t>(got));
    offset += static_cast<std::uint64_t>(got);
  }
  return true;
}

}  // namespace

CopyOutcome copy_term(const LocalChunks::Span& from, const xet::Term& term, TaskWriter& writer,
                      xet::ChunkLayoutBuilder* layout, std::vector<std::byte>& buffer) {
  const util::UniqueFd fd(::open(from.file->c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid() || store::FileIdentity::of(*from.file) != *from.identity) return CopyOutcome::kUnreadable;
  buffer.resize(xet::kMaxChunkBytes);
  std::uint64_t offset = from.span.offset;
  std::uint32_t chunk = term.chunk_begin;
  bool wrote = false;
  for (const std::uint32_t length : from.span.lengths) {
    if (writer.reached_end()) break;
    // No chunk is longer (the decoder refuses one): a record that says so is wrong, and nothing is read past it.
    if (length > buffer.size()) return wrote ? CopyOutcome::kCutShort : CopyOutcome::kUnreadable;
    const std::span<std::byte> data(buffer.data(), length);
    if (!read_exactly(fd.get(), offset, data)) return wrote ? CopyOutcome::kCutShort : CopyOutcome::kUnreadable;
    // As for a fetched chunk (XetRangeSink): where it lies in the file, whether this range writes all of it or not.
    if (layout != nullptr) layout->add(writer.stream_offset(), term.xorb_hash, chunk, length);
    writer.emit(data);
    wrote = true;
    offset += length;
    ++chunk;
  }
  return CopyOutcome::kCopied;
}

}  // namespace hfget::transfer
