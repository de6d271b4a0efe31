// SPDX-License-Identifier: MIT
// The one place that asks "local dir or cache?": each answer below maps the question to the store's function
// for that kind of target (store/layout.hpp, store/download_record.hpp).
#include "hfget/target.hpp"

#include "store/download_record.hpp"
#include "store/layout.hpp"
#include "store/repo_path.hpp"
#include "store/target_lock.hpp"

namespace hfget {

Target Target::in_cache(std::filesystem::path cache_dir, RepoId repo, SnapshotFiles files) {
  return Target(std::nullopt, std::move(cache_dir), std::move(repo), files);
}

Target Target::in_local_dir(std::filesystem::path dir, RepoType type) {
  RepoId repo;
  repo.type = type;
  return Target(std::move(dir), {}, std::move(repo), SnapshotFiles::kRealFiles);
}

std::filesystem::path Target::state_dir() const {
  return local_dir_ ? store::state_dir_in_local_dir(*local_dir_) : store::state_dir_in_cache(cache_dir_, repo_);
}

std::filesystem::path Target::prepare_state_dir() const {
  std::filesystem::create_directories(root());
  const std::filesystem::path dir = state_dir();
  store::create_directories_within(root(), dir.lexically_relative(root()));
  return dir;
}

std::optional<long> Target::lock_holder() const {
  return store::TargetLock::holder(state_dir());
}

std::optional<std::string> Target::recorded_commit(const std::string& revision) const {
  if (is_commit_id(revision)) return revision;
  return local_dir_ ? store::recorded_commit_in_local_dir(*local_dir_)
                    : store::recorded_commit_in_cache(cache_dir_, repo_, revision);
}

std::optional<std::vector<RemoteFile>> Target::recorded_listing(const std::string& commit) const {
  return local_dir_ ? store::recorded_listing_in_local_dir(*local_dir_, commit)
                    : store::recorded_listing_in_cache(cache_dir_, repo_, commit);
}

std::filesystem::path Target::record_path(const std::string& commit) const {
  return local_dir_ ? store::record_path_in_local_dir(*local_dir_, commit)
                    : store::record_path_in_cache(cache_dir_, repo_, commit);
}

std::filesystem::path Target::snapshot_path(const std::string& commit) const {
  return local_dir_ ? *local_dir_ : cache_dir_ / cache_folder_name(repo_) / "snapshots" / commit;
}

std::unique_ptr<store::Layout> Target::layout(const std::string& commit) const {
  if (local_dir_) return store::make_local_dir_layout(*local_dir_, commit);
  return store::make_cache_layout(cache_dir_, repo_, commit,
                                  files_ == SnapshotFiles::kRealFiles ? store::SnapshotFiles::kRealFiles
                                                                      : store::SnapshotFiles::kSymlinksWhereSupported);
}

}  // namespace hfget
