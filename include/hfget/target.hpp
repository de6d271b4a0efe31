// SPDX-License-Identifier: MIT
// Where a download lands: repo X in the HF cache under dir D, or the local dir P. The two differ in every
// path (the snapshot folder, hfget's state folder, where the commit and the listing were recorded, the
// layout of the files), and the code that downloads, verifies, reports status or removes a download used to
// ask "local dir or cache?" at each of those points, a dozen times over. A Target asks it once, when it is
// made, and answers the questions; the kind of target is a value, not a branch repeated by every caller.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hfget/repo.hpp"

namespace hfget {

namespace store {
class Layout;  // internal: the files of one commit on disk (src/store/layout.hpp)
}

class Target {
 public:
  /// How a cache snapshot's files hold their bytes: symlinks into blobs/ where the disk allows them, or
  /// real files always (HF_HUB_DISABLE_SYMLINKS).
  enum class SnapshotFiles { kSymlinksWhereSupported, kRealFiles };

  /// Repo `repo` in the HF cache `cache_dir`.
  static Target in_cache(std::filesystem::path cache_dir, RepoId repo,
                         SnapshotFiles files = SnapshotFiles::kSymlinksWhereSupported);
  /// The local dir `dir` (a `--local-dir` download). A local dir does not record its repo id; `type` is the
  /// repo type the caller was told (it decides which checks apply).
  static Target in_local_dir(std::filesystem::path dir, RepoType type = RepoType::kModel);

  /// A snapshot of the cache (blobs, symlinks, refs), rather than a local dir of real files.
  bool is_cache() const noexcept { return !local_dir_.has_value(); }
  /// The local dir, for a local-dir target.
  const std::optional<std::filesystem::path>& local_dir() const noexcept { return local_dir_; }
  /// The folder everything lands under, created first and measured for free space: the local dir, or the
  /// cache folder.
  const std::filesystem::path& root() const noexcept { return local_dir_ ? *local_dir_ : cache_dir_; }
  const std::filesystem::path& cache_dir() const noexcept { return cache_dir_; }
  /// The repo (its name is empty for a local dir, which does not record it).
  const RepoId& repo() const noexcept { return repo_; }

  /// hfget's own folder for this target: the download records, the state file, the detached log, the lock.
  std::filesystem::path state_dir() const;
  /// Creates the root and the state folder, refusing a symlink on the way (Error naming it); returns it.
  std::filesystem::path prepare_state_dir() const;
  /// The PID of the hfget download holding this target's lock, if one does.
  std::optional<long> lock_holder() const;

  /// The commit an earlier download recorded, for offline mode and verify: a full commit id is itself; a
  /// local dir's is the one trees/<commit>.json there names (none when there are several, whatever the
  /// revision); the cache's is refs/<revision>. Not checked to be a commit id.
  std::optional<std::string> recorded_commit(const std::string& revision) const;
  /// The listing recorded at download time (trees/<commit>.json).
  std::optional<std::vector<RemoteFile>> recorded_listing(const std::string& commit) const;
  /// hfget's record of which files a download of `commit` selected.
  std::filesystem::path record_path(const std::string& commit) const;
  /// Where the files of `commit` are: snapshots/<commit> in the cache, the local dir itself.
  std::filesystem::path snapshot_path(const std::string& commit) const;
  /// The layout of `commit`'s files on this target (the library's own use: store::Layout is internal).
  std::unique_ptr<store::Layout> layout(const std::string& commit) const;

 private:
  Target(std::optional<std::filesystem::path> local_dir, std::filesystem::path cache_dir, RepoId repo,
         SnapshotFiles files)
      : local_dir_(std::move(local_dir)), cache_dir_(std::move(cache_dir)), repo_(std::move(repo)), files_(files) {}

  std::optional<std::filesystem::path> local_dir_;  // set: a local dir; else repo_ in cache_dir_
  std::filesystem::path cache_dir_;
  RepoId repo_;
  SnapshotFiles files_ = SnapshotFiles::kSymlinksWhereSupported;
};

}  // namespace hfget
