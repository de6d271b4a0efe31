// SPDX-License-Identifier: MIT
#include "xet/chunk_layout.hpp"

#include <algorithm>
#include <numeric>

#include "xet/chunk_stream.hpp"
#include "xet/reconstruction.hpp"

namespace hfget::xet {
namespace {

constexpr std::string_view kMagic = "hfget-xet-layout";
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHashDigits = 64;
constexpr std::size_t kRunHeaderBytes = kHashDigits + 8 + 4 + 4;

[[noreturn]] void reject(const std::string& what) {
  throw ChunkLayoutError("chunk layout record: " + what);
}

void put(std::string& out, std::uint64_t value, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// Reads the record front to back; every read checks that the bytes are there.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}
  std::uint64_t number(std::size_t bytes, const char* what) {
    if (rest_.size() < bytes) reject(std::string("truncated in ") + what);
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < bytes; ++i) value |= std::uint64_t{static_cast<unsigned char>(rest_[i])} << (8 * i);
    rest_.remove_prefix(bytes);
    return value;
  }
  std::string_view text(std::size_t length, const char* what) {
    if (rest_.size() < length) reject(std::string("truncated in ") + what);
    const std::string_view taken = rest_.substr(0, length);
    rest_.remove_prefix(length);
    return taken;
  }
  std::size_t left() const noexcept { return rest_.size(); }

 private:
  std::string_view rest_;
};

}  // namespace

std::uint64_t ChunkRun::bytes() const noexcept {
  return std::accumulate(lengths.begin(), lengths.end(), std::uint64_t{0});
}

std::optional<FileSpan> ChunkLayout::find(std::string_view xorb_hash, std::uint32_t chunk_begin,
                                          std::uint32_t chunk_end) const {
  if (chunk_begin >= chunk_end) return std::nullopt;
  for (const ChunkRun& run : runs) {
    if (run.xorb_hash != xorb_hash || chunk_begin < run.chunk_begin || chunk_end > run.chunk_end()) continue;
    const auto first = run.lengths.begin() + (chunk_begin - run.chunk_begin);
    const auto end = first + (chunk_end - chunk_begin);
    const std::uint64_t before = std::accumulate(run.lengths.begin(), first, std::uint64_t{0});
    return FileSpan{run.file_offset + before, std::accumulate(first, end, std::uint64_t{0}),
                    std::span<const std::uint32_t>(&*first, static_cast<std::size_t>(end - first))};
  }
  return std::nullopt;
}

std::uint64_t ChunkLayout::covered_bytes() const noexcept {
  std::uint64_t total = 0;
  for (const ChunkRun& run : runs) total += run.bytes();
  return total;
}

void ChunkLayoutBuilder::add(std::uint64_t file_offset, std::string_view xorb_hash, std::uint32_t chunk,
                             std::uint32_t length) {
  // The last chunk index has no exclusive end a run could name.
  if (length == 0 || chunk == UINT32_MAX || file_offset > file_size_ || length > file_size_ - file_offset) return;
  std::lock_guard guard(mutex_);
  if (entries_.size() >= kMaxChunks) return;
  // A file names few xorbs (one per ~64 MiB), so a linear search from the most recent one is short.
  auto xorb = std::find(xorbs_.rbegin(), xorbs_.rend(), xorb_hash);
  std::uint32_t index = 0;
  if (xorb == xorbs_.rend()) {
    index = static_cast<std::uint32_t>(xorbs_.size());
    xorbs_.emplace_back(xorb_hash);
  } else {
    index = static_cast<std::uint32_t>(std::distance(xorb, xorbs_.rend()) - 1);
  }
  entries_.push_back({file_offset, index, chunk, length});
}

ChunkLayout ChunkLayoutBuilder::layout() const {
  std::vector<Entry> entries;
  std::vector<std::string> xorbs;
  {
    std::lock_guard guard(mutex_);
    entries = entries_;
    xorbs = xorbs_;
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.file_offset < b.file_offset; });
  ChunkLayout layout{.file_size = file_size_, .runs = {}};
  std::uint64_t end = 0;  // of the last chunk kept
  for (const Entry& entry : entries) {
    if (entry.file_offset < end) continue;  // overlaps a chunk kept before (the same bytes written twice)
    ChunkRun* last = layout.runs.empty() ? nullptr : &layout.runs.back();
    if (last != nullptr && entry.file_offset == end && last->xorb_hash == xorbs[entry.xorb] &&
        entry.chunk == last->chunk_end()) {
      last->lengths.push_back(entry.length);
    } else {
      layout.runs.push_back({xorbs[entry.xorb], entry.file_offset, entry.chunk, {entry.length}});
    }
    end = entry.file_offset + entry.length;
  }
  return layout;
}

void ChunkLayoutBuilder::clear() {
  std::lock_guard guard(mutex_);
  entries_.clear();
  xorbs_.clear();
}

std::string serialize_chunk_layout(const ChunkLayout& layout) {
  std::string out(kMagic);
  put(out, kVersion, 4);
  put(out, layout.file_size, 8);
  put(out, layout.runs.size(), 4);
  for (const ChunkRun& run : layout.runs) {
    out += run.xorb_hash;
    put(out, run.file_offset, 8);
    put(out, run.chunk_begin, 4);
    put(out, run.lengths.size(), 4);
    for (const std::uint32_t length : run.lengths) put(out, length, 4);
  }
  return out;
}

ChunkLayout parse_chunk_layout(std::string_view record, std::optional<std::uint64_t> expected_size) {
  Reader in(record);
  if (in.text(kMagic.size(), "the magic") != kMagic) reject("not a chunk layout (wrong magic)");
  if (const std::uint64_t version = in.number(4, "the version"); version != kVersion) {
    reject("version " + std::to_string(version) + ", not " + std::to_string(kVersion));
  }
  const std::uint64_t file_size = in.number(8, "the file size");
  if (expected_size && file_size != *expected_size) {
    reject("written for a file of " + std::to_string(file_size) + " bytes, not " + std::to_string(*expected_size));
  }
  const std::uint64_t run_count = in.number(4, "the run count");
  // Each run takes at least its header and one length: a count the bytes cannot hold is refused before any
  // memory is reserved for it.
  if (run_count > in.left() / (kRunHeaderBytes + 4)) reject("more runs than the record holds");
  ChunkLayout layout{.file_size = file_size, .runs = {}};
  layout.runs.reserve(run_count);
  std::uint64_t end = 0;
  for (std::uint64_t r = 0; r < run_count; ++r) {
    ChunkRun run;
    run.xorb_hash = std::string(in.text(kHashDigits, "a run's hash"));
    if (!is_hash_hex(run.xorb_hash)) reject("run " + std::to_string(r) + ": hash is not 64 lowercase hex digits");
    run.file_offset = in.number(8, "a run's offset");
    run.chunk_begin = static_cast<std::uint32_t>(in.number(4, "a run's first chunk"));
    const std::uint64_t count = in.number(4, "a run's chunk count");
    if (count == 0) reject("run " + std::to_string(r) + " has no chunks");
    if (count > in.left() / 4) reject("run " + std::to_string(r) + ": more chunks than the record holds");
    if (run.chunk_begin + count > UINT32_MAX) reject("run " + std::to_string(r) + ": chunk indices overflow");
    if (run.file_offset < end) reject("run " + std::to_string(r) + " overlaps the run before it");
    run.lengths.reserve(count);
    std::uint64_t position = run.file_offset;
    for (std::uint64_t c = 0; c < count; ++c) {
      const auto length = static_cast<std::uint32_t>(in.number(4, "a chunk length"));
      if (length == 0 || length > kMaxChunkBytes) {
        reject("run " + std::to_string(r) + ": a chunk of " + std::to_string(length) + " bytes");
      }
      if (length > file_size || position > file_size - length) {
        reject("run " + std::to_string(r) + " reaches past the file's " + std::to_string(file_size) + " bytes");
      }
      position += length;
      run.lengths.push_back(length);
    }
    end = position;
    layout.runs.push_back(std::move(run));
  }
  if (in.left() != 0) reject(std::to_string(in.left()) + " bytes after the last run");
  return layout;
}

}  // namespace hfget::xet
