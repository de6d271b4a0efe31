// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "hfget/repo.hpp"
#include "store/file_lock.hpp"
#include "store/partial_claim.hpp"
#include "store/partial_file.hpp"

namespace hfget::store {

/// Where a download goes and how it looks on disk: the HF cache (blobs + snapshot symlinks + refs) or a
/// local dir (real files + .cache/huggingface metadata). Both are byte-compatible with huggingface_hub
/// (HUB-PROTOCOL §4, §5), so the Python client, transformers and vLLM find the files as their own.
class Layout {
 public:
  virtual ~Layout() = default;

  /// The path printed on success: snapshots/<commit> in the cache, the local dir itself otherwise.
  virtual std::filesystem::path snapshot_path() const = 0;
  /// hfget's own folder in this target (store/download_record.hpp), which prepare() creates.
  virtual std::filesystem::path state_dir() const = 0;
  /// Before anything is written: refuses (Error naming the path) when a folder on the way to a file is a
  /// symlink or not a folder, or a file's final path is a folder. A symlink placed there could lead writes
  /// outside the target.
  void check_paths(const std::vector<RemoteFile>& files) const;
  /// Creates the folders and marker files (CACHEDIR.TAG, .gitignore) and records the commit: refs/<revision>,
  /// trees/<commit>.json with the complete listing, and hfget's record of the selected paths.
  virtual void prepare(const Snapshot& snapshot, const std::vector<RemoteFile>& selected,
                       const std::string& revision) = 0;
  /// True when the file is already there, intact as far as size and recorded etag tell, so it needs no request.
  virtual bool is_complete(const RemoteFile& file) const = 0;
  /// Where the file's bytes are once published: the blob in the cache, the file itself in a local dir.
  virtual std::filesystem::path content_path(const RemoteFile& file) const = 0;
  /// A file already in this target that holds the content with this SHA-256 and size, as far as hfget can tell
  /// without reading it: the blob in the cache; in a local dir, a file hfget checked and that is unchanged since
  /// (hfget/published.jsonl). nullopt when there is none. A later revision copies chunks from it.
  virtual std::optional<std::filesystem::path> find_content(const std::string& sha256, std::uint64_t size) const = 0;
  /// Makes an already complete file visible at its path in this snapshot (cache symlink, local metadata),
  /// and removes what an interrupted earlier run may have left for it (partial file, journal).
  virtual void link_existing(const RemoteFile& file) = 0;
  /// A file at its final path without (valid) metadata — copied in by hand, or published just before a
  /// kill -9 — is hashed once; when it matches the listing it is recorded and true is returned, so it is not
  /// downloaded again. As the Python client does for local dirs. Throws Error{kInterrupted} on `stop`.
  virtual bool adopt_unrecorded(const RemoteFile& /*file*/, const std::stop_token& /*stop*/) { return false; }

  /// The shared name of the file's partial files: never the final name, never one the Python client prunes
  /// or resumes. Each process writes its own beside it (see store/partial_claim.hpp).
  virtual std::filesystem::path partial_path(const RemoteFile& file) const = 0;
  /// The lock file the Python client takes for the same file.
  virtual std::filesystem::path lock_path(const RemoteFile& file) const = 0;
  /// Opens (creating its folder) this process's own partial file, claiming one an earlier run left.
  virtual PartialFile open_partial(const RemoteFile& file) = 0;
  /// Takes the file's lock (creating its folder); see FileLock.
  virtual FileLock lock(const RemoteFile& file, const std::stop_token& stop) = 0;
  /// Bytes in the fullest partial file a resume would claim, without creating anything: what it will not
  /// fetch again.
  std::uint64_t partial_bytes(const RemoteFile& file) const;

  /// Publishes verified bytes under the final name (atomic rename), then links or records them.
  virtual void publish(const RemoteFile& file, PartialFile&& partial) = 0;

 protected:
  /// Removes a leftover partial file and journal of a file that is complete.
  void remove_leftovers(const RemoteFile& file) const;
  /// Opens this process's partial file (see open_partial), claiming an abandoned one if the index knows of any.
  PartialFile open_own_partial(const RemoteFile& file);

 private:
  mutable LeftoverIndex leftovers_;  // one listing per folder per run
};

/// How a cache snapshot's files hold their bytes. kSymlinksWhereSupported: relative symlinks into blobs/,
/// unless the repo folder refuses symlinks (probed once, as huggingface_hub's are_symlinks_supported does),
/// then real files. kRealFiles: real files always (HF_HUB_DISABLE_SYMLINKS). Real files are laid out as
/// huggingface_hub does: a new download is moved into the snapshot, a blob already in blobs/ is copied.
enum class SnapshotFiles { kSymlinksWhereSupported, kRealFiles };

std::unique_ptr<Layout> make_cache_layout(std::filesystem::path cache_dir, RepoId repo, std::string commit,
                                          SnapshotFiles snapshot_files = SnapshotFiles::kSymlinksWhereSupported);
std::unique_ptr<Layout> make_local_dir_layout(std::filesystem::path local_dir, std::string commit);

/// The commit an earlier download recorded for `revision`, for offline mode: refs/<revision> in the cache;
/// in a local dir, the one trees/<commit>.json there is.
std::optional<std::string> recorded_commit_in_cache(const std::filesystem::path& cache_dir, const RepoId& repo,
                                                    const std::string& revision);
std::optional<std::string> recorded_commit_in_local_dir(const std::filesystem::path& local_dir);
/// The listing recorded at download time (trees/<commit>.json).
std::optional<std::vector<RemoteFile>> recorded_listing_in_cache(const std::filesystem::path& cache_dir,
                                                                 const RepoId& repo, const std::string& commit);
std::optional<std::vector<RemoteFile>> recorded_listing_in_local_dir(const std::filesystem::path& local_dir,
                                                                     const std::string& commit);

/// The paths of `files`, for the download record.
std::vector<std::string> selected_paths(const std::vector<RemoteFile>& files);

/// The CACHEDIR.TAG content huggingface_hub writes (https://bford.info/cachedir/).
extern const char* const kCacheDirTag;

}  // namespace hfget::store
