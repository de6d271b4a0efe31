// SPDX-License-Identifier: MIT
// `hfget cache rm`: a whole repo folder, or one revision: its snapshot folder, the refs naming it, its
// trees/ and hfget/ records and .no_exist/ markers, and the blobs it links to that no remaining snapshot
// links to (as huggingface_hub's delete_revisions). Which blob a snapshot uses is read from the symlink's
// text, never by following it; only a symlink into this repo's blobs/ counts. Removing the last revision
// removes the repo. Nothing outside <cache>/<repo folder> is touched: .locks/ belongs to every client of the
// cache.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "cache_admin/removal_lock.hpp"
#include "cache_admin/remove_within.hpp"
#include "hfget/cache.hpp"
#include "hfget/error.hpp"
#include "store/download_record.hpp"
#include "store/repo_path.hpp"
#include "util/read_text_file.hpp"

namespace hfget {
namespace {

constexpr std::uint64_t kMaxRefBytes = 4096;

bool is_real_directory(const std::filesystem::path& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool is_regular_file_itself(const std::filesystem::path& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool exists_without_following(const std::filesystem::path& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0;
}

std::filesystem::path checked_repo_path(const std::filesystem::path& cache_dir, const RepoId& repo) {
  const std::filesystem::path repo_path = cache_dir / cache_folder_name(repo);
  struct stat info {};
  if (::lstat(repo_path.c_str(), &info) != 0) {
    throw Error(ErrorCode::kRepoNotFound,
                fmt::format("{} {} is not in the cache {}", to_string(repo.type), repo.name, cache_dir.string()));
  }
  if (S_ISLNK(info.st_mode)) {
    throw Error(
        ErrorCode::kUsage,
        fmt::format("{} is a symlink; hfget removes nothing through it (remove it by hand)", repo_path.string()),
        repo_path);
  }
  if (!S_ISDIR(info.st_mode)) {
    throw Error(ErrorCode::kUsage, fmt::format("{} is not a folder; remove it by hand", repo_path.string()), repo_path);
  }
  return repo_path;
}

std::vector<std::string> snapshot_commits(const std::filesystem::path& repo_path) {
  std::vector<std::string> commits;
  std::error_code error;
  const std::filesystem::path snapshots_dir = repo_path / "snapshots";
  if (!is_real_directory(snapshots_dir)) return commits;
  for (const auto& entry : std::filesystem::directory_iterator(snapshots_dir, error)) {
    if (is_real_directory(entry.path())) commits.push_back(entry.path().filename().string());
  }
  std::sort(commits.begin(), commits.end());
  return commits;
}

// refs/<name> → its content, for every regular file below refs/ ("main", "refs/pr/1").
std::map<std::string, std::string> read_refs(const std::filesystem::path& repo_path) {
  std::map<std::string, std::string> refs;
  const std::filesystem::path refs_dir = repo_path / "refs";
  if (!is_real_directory(refs_dir)) return refs;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(refs_dir, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (!is_regular_file_itself(it->path())) continue;
    refs[it->path().lexically_relative(refs_dir).generic_string()] =
        util::read_text_file(it->path(), kMaxRefBytes).value_or("");
  }
  return refs;
}

// The blob names (blobs/<name>) the snapshot's symlinks point to, read from the link text.
std::set<std::string> blobs_used_by(const std::filesystem::path& repo_path, const std::string& commit) {
  std::set<std::string> used;
  const std::filesystem::path blobs_dir = (repo_path / "blobs").lexically_normal();
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(repo_path / "snapshots" / commit, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (!it->is_symlink()) continue;
    std::error_code link_error;
    const std::filesystem::path target = std::filesystem::read_symlink(it->path(), link_error);
    if (link_error) continue;
    const std::filesystem::path resolved = (it->path().parent_path() / target).lexically_normal();
    if (resolved.parent_path() == blobs_dir) used.insert(resolved.filename().string());
  }
  return used;
}

std::vector<std::string> ref_names(const std::map<std::string, std::string>& refs) {
  std::vector<std::string> names;
  for (const auto& [name, commit] : refs) names.push_back(name);
  return names;
}

std::string joined_or_none(const std::vector<std::string>& names) {
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

CacheRemovalPlan whole_repo_plan(const std::filesystem::path& repo_path) {
  CacheRemovalPlan plan;
  plan.repo_path = repo_path;
  plan.whole_repo = true;
  plan.commits = snapshot_commits(repo_path);
  plan.refs = ref_names(read_refs(repo_path));
  plan.paths.push_back(repo_path);
  std::error_code error;
  if (is_real_directory(repo_path / "blobs")) {
    for (const auto& entry : std::filesystem::directory_iterator(repo_path / "blobs", error)) {
      if (is_regular_file_itself(entry.path())) ++plan.blob_count;
    }
  }
  plan.bytes_freed = cache_admin::bytes_below(repo_path);
  return plan;
}

}  // namespace

CacheRemovalPlan plan_cache_removal(const std::filesystem::path& cache_dir, const RepoId& repo,
                                    const std::optional<std::string>& revision) {
  const std::filesystem::path repo_path = checked_repo_path(cache_dir, repo);
  if (!revision) return whole_repo_plan(repo_path);

  const std::vector<std::string> commits = snapshot_commits(repo_path);
  const std::map<std::string, std::string> refs = read_refs(repo_path);
  std::string commit = *revision;
  if (std::find(commits.begin(), commits.end(), commit) == commits.end()) {
    const auto ref = refs.find(*revision);
    if (ref == refs.end()) {
      throw Error(ErrorCode::kRevisionNotFound,
                  fmt::format("revision '{}' of {} is not in the cache (snapshots: {}; refs: {})", *revision, repo.name,
                              joined_or_none(commits), joined_or_none(ref_names(refs))));
    }
    commit = ref->second;
    if (std::find(commits.begin(), commits.end(), commit) == commits.end()) {
      throw Error(ErrorCode::kRevisionNotFound,
                  fmt::format("ref '{}' of {} points to '{}', which has no snapshot in the cache", *revision, repo.name,
                              commit));
    }
  }
  if (commits.size() == 1) return whole_repo_plan(repo_path);

  CacheRemovalPlan plan;
  plan.repo_path = repo_path;
  plan.commits = {commit};
  std::set<std::string> still_used;
  for (const std::string& other : commits) {
    if (other == commit) continue;
    const std::set<std::string> used = blobs_used_by(repo_path, other);
    still_used.insert(used.begin(), used.end());
  }
  plan.paths.push_back(repo_path / "snapshots" / commit);
  for (const std::string& blob : blobs_used_by(repo_path, commit)) {
    const std::filesystem::path blob_path = repo_path / "blobs" / blob;
    if (still_used.count(blob) != 0 || !is_regular_file_itself(blob_path)) continue;
    plan.paths.push_back(blob_path);
    ++plan.blob_count;
  }
  for (const auto& [name, target] : refs) {
    if (target != commit) continue;
    plan.refs.push_back(name);
    plan.paths.push_back(repo_path / "refs" / name);
  }
  // What hfget and the Python client recorded about this commit goes with it.
  for (const std::filesystem::path& record :
       {repo_path / "trees" / (commit + ".json"), repo_path / "hfget" / (commit + ".json"),
        repo_path / ".no_exist" / commit}) {
    if (exists_without_following(record)) plan.paths.push_back(record);
  }
  for (const std::filesystem::path& path : plan.paths) plan.bytes_freed += cache_admin::bytes_below(path);
  return plan;
}

CacheRemovalPlan remove_from_cache(const std::filesystem::path& cache_dir, const RepoId& repo,
                                   const std::optional<std::string>& revision) {
  // The first plan refuses an unknown repo or revision before anything is created for the lock.
  const std::filesystem::path repo_path = plan_cache_removal(cache_dir, repo, revision).repo_path;
  const std::filesystem::path state_dir = store::state_dir_in_cache(cache_dir, repo);
  store::create_directories_within(repo_path, state_dir.lexically_relative(repo_path));
  const store::TargetLock lock = cache_admin::lock_for_removal(state_dir);
  const std::uint64_t lock_bytes = cache_admin::bytes_below(state_dir / "download.lock");
  // Planned again under the lock: a download may have added a snapshot since the first look.
  CacheRemovalPlan plan = plan_cache_removal(cache_dir, repo, revision);
  plan.bytes_freed = 0;
  for (const std::filesystem::path& path : plan.paths) {
    plan.bytes_freed += cache_admin::remove_within(plan.whole_repo ? cache_dir : repo_path, path);
  }
  // The lock file went with the repo, holding the PID this removal wrote into it: not space the user had
  // used.
  if (plan.whole_repo) plan.bytes_freed -= std::min(plan.bytes_freed, lock_bytes);
  if (!plan.whole_repo) {
    // Folders a removed ref or marker leaves empty (refs/refs/pr/), deepest first; the top-level folders
    // stay.
    std::vector<std::filesystem::path> parents;
    for (const std::filesystem::path& path : plan.paths) {
      for (std::filesystem::path parent = path.parent_path();
           cache_admin::is_within(repo_path, parent) && parent.parent_path() != repo_path && parent != repo_path;
           parent = parent.parent_path()) {
        parents.push_back(parent);
      }
    }
    std::sort(parents.begin(), parents.end(), [](const auto& a, const auto& b) {
      return std::distance(a.begin(), a.end()) > std::distance(b.begin(), b.end());
    });
    for (const std::filesystem::path& parent : parents) cache_admin::remove_empty_directory_within(repo_path, parent);
  }
  return plan;
}

}  // namespace hfget
