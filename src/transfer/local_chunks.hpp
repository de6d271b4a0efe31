// SPDX-License-Identifier: MIT
// Chunk-level reuse across revisions (issue 19): the chunks a Xet download can copy from files already in its
// target instead of fetching them. A later revision of a model names mostly the same (xorb, chunk range)
// terms as the one on disk; hfget recorded where each chunk of those files lies (xet/chunk_layout.hpp) when it
// fetched them, so a term whose chunks one such file holds back to back is read from there.
//
// Nothing here is trusted more than a fetch: a record is a hint, a file may have been edited after hfget
// checked it, and a copy goes through the same incoming file as fetched bytes, so the whole file's SHA-256
// decides. A file whose hash does not match is fetched again without copying (SourcedFile::copy_allowed).
#pragma once

#include <cstddef>
#include <deque>
#include <filesystem>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "hfget/download.hpp"
#include "store/layout.hpp"
#include "store/published_files.hpp"
#include "transfer/xet_range_sink.hpp"
#include "xet/chunk_layout.hpp"
#include "xet/reconstruction.hpp"

namespace hfget::transfer {

/// Thread-safe: the connections look terms up while a file of the same download that was just published is
/// added (so that a later file copies what an earlier one of the same download holds).
class LocalChunks {
 public:
  /// Where a term's chunks lie in a local file.
  struct Span {
    const std::filesystem::path* file = nullptr;
    const store::FileIdentity* identity = nullptr;  // the file as it was when its record was read
    xet::FileSpan span;
  };

  LocalChunks() = default;
  LocalChunks(const LocalChunks&) = delete;
  LocalChunks& operator=(const LocalChunks&) = delete;
  /// Adds the records in `layout`'s state dir whose content is still in the target (Layout::find_content),
  /// except the contents `plan` replaces (--verify found them damaged, or --force-download fetches them again:
  /// neither is to be rebuilt from the copy it replaces).
  void add_from_target(const store::Layout& layout, const std::vector<PlannedFile>& plan);
  /// Adds the file at `path` whose chunks lie as `chunk_layout` says (not when it is not a regular file).
  void add(std::filesystem::path path, xet::ChunkLayout chunk_layout);

  /// A local file that holds the term's chunks back to back, their lengths adding up to the term's
  /// data_bytes; nullopt when none does.
  std::optional<Span> find(const xet::Term& term) const;
  /// No term is found in the file of `found` any more: it could not be read as its record says, so every later
  /// term it would serve, on any connection, goes to the next file that holds it or is fetched. Only that
  /// record: a file this download published at the same path since is another entry, and stays.
  void forget(const Span& found);
  bool empty() const;
  std::size_t files() const;

 private:
  struct File {
    std::filesystem::path path;
    store::FileIdentity identity;
    xet::ChunkLayout layout;
  };
  mutable std::shared_mutex mutex_;
  std::deque<File> files_;                                           // a Span points into it: never moved once added
  std::unordered_multimap<std::string, std::size_t> files_by_xorb_;  // each file once per xorb it holds
};

enum class CopyOutcome {
  kCopied,      // every chunk of the term was written (or the task's end was reached)
  kUnreadable,  // the local file could not be read: nothing was written, the term is to be fetched
  kCutShort,    // a read failed after some chunks were written: the range is to be asked again from there
};

/// Writes the term's chunks, read from where `from` says, through `writer` (which skips what comes before the
/// range, as for fetched chunks), and tells `layout` (if set) each chunk and its offset. `buffer` is
/// the connection's (one chunk, kMaxChunkBytes). A file changed since its record was read (another inode, size
/// or time: in a local dir, a file this download has replaced meanwhile) is kUnreadable.
CopyOutcome copy_term(const LocalChunks::Span& from, const xet::Term& term, TaskWriter& writer,
                      xet::ChunkLayoutBuilder* layout, std::vector<std::byte>& buffer);

}  // namespace hfget::transfer
