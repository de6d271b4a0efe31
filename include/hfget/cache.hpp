// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hfget/repo.hpp"

namespace hfget {

/// One commit present in a cached repo: snapshots/<commit>/.
struct CachedRevision {
  std::string commit;
  std::vector<std::string> refs;        // the refs/ names holding this commit ("main", "refs/pr/1"), sorted
  std::size_t file_count = 0;           // files in the snapshot
  std::uint64_t size_on_disk = 0;       // its distinct blobs, each counted once
  std::int64_t last_modified_unix = 0;  // newest blob, or the snapshot folder when it is empty
  // A download not finished yet (or stopped): what it selected and the snapshot lacks, and their partial files.
  std::size_t files_missing = 0;
  std::size_t partial_files = 0;
  bool incomplete() const noexcept { return files_missing > 0; }
};

/// One repo of the HF cache, read as huggingface_hub's scan_cache_dir reads it.
struct CachedRepo {
  RepoType type = RepoType::kModel;
  std::string repo_id;  // "org/name"
  std::filesystem::path path;
  std::vector<CachedRevision> revisions;  // sorted by commit
  std::size_t file_count = 0;             // distinct blobs of all revisions
  std::uint64_t size_on_disk = 0;         // distinct blobs of all revisions, each counted once
  std::int64_t last_modified_unix = 0;
  std::int64_t last_accessed_unix = 0;
};

/// An entry scan_cache_dir would raise CorruptedCacheException for (the repo is then left out of the scan).
struct CacheWarning {
  std::filesystem::path path;
  std::string message;
};

struct CacheScan {
  std::filesystem::path cache_dir;
  bool exists = false;
  std::vector<CachedRepo> repos;  // sorted by type, then repo id
  std::vector<CacheWarning> warnings;
  std::uint64_t size_on_disk = 0;
};

/// Reads the cache with the rules of huggingface_hub's scan_cache_dir (HUB-PROTOCOL §4): sizes come from the
/// resolved snapshot targets, a blob shared by several snapshots is counted once per repo. Never writes.
CacheScan scan_cache(const std::filesystem::path& cache_dir);

/// What `hfget cache rm` removes: a whole repo folder, or one revision with the blobs no other revision uses.
/// Every path is inside <cache>/<repo folder>; nothing outside it (.locks/ included) is touched.
struct CacheRemovalPlan {
  std::filesystem::path repo_path;
  bool whole_repo = false;
  std::vector<std::string> commits;          // the revisions removed
  std::vector<std::string> refs;             // refs that pointed at them
  std::vector<std::filesystem::path> paths;  // removed with everything below them (symlinks are never followed)
  std::size_t blob_count = 0;
  std::uint64_t bytes_freed = 0;  // sizes of the regular files removed
};

/// `revision`: a commit present in snapshots/, or a ref name (refs/<name>). Deleting the last revision
/// removes the whole repo, as huggingface_hub's delete_revisions does. Throws Error{kRepoNotFound} when the
/// repo is not in the cache, Error{kRevisionNotFound} for an unknown revision, Error{kUsage} for a symlinked
/// repo folder.
CacheRemovalPlan plan_cache_removal(const std::filesystem::path& cache_dir, const RepoId& repo,
                                    const std::optional<std::string>& revision);

/// Takes the repo's download lock without waiting (Error{kBusy} while a download holds it), plans again
/// under the lock and removes. Returns what was removed.
CacheRemovalPlan remove_from_cache(const std::filesystem::path& cache_dir, const RepoId& repo,
                                   const std::optional<std::string>& revision);

/// What `hfget rm --local-dir` removes: the files hfget's download records list and whose metadata shows them
/// unchanged since the download, their metadata, and hfget's own records. Files it did not write stay.
struct LocalDirRemovalPlan {
  std::filesystem::path local_dir;
  std::vector<std::string> files;  // repo-relative, removed
  struct Kept {
    std::string path;
    std::string reason;
  };
  std::vector<Kept> kept;  // listed by a record, but not removed
  std::uint64_t bytes_freed = 0;
};

/// Throws Error{kUsage} for a directory without hfget's download record
/// (.cache/huggingface/hfget/<commit>.json).
LocalDirRemovalPlan plan_local_dir_removal(const std::filesystem::path& local_dir);

struct LocalDirRemoval {
  LocalDirRemovalPlan plan;
  bool directory_removed = false;
  std::vector<std::string> left;  // what is still in the directory, relative, sorted
};

/// Takes the local dir's download lock without waiting (Error{kBusy}), plans again under it and removes.
LocalDirRemoval remove_local_dir_download(const std::filesystem::path& local_dir);

}  // namespace hfget
