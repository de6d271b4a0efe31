// SPDX-License-Identifier: MIT
// `hfget cache ls` reads the cache exactly as huggingface_hub's scan_cache_dir does (HUB-PROTOCOL §4), so
// both tools report the same repos, sizes and problems: a few top-level names are skipped (.locks,
// CACHEDIR.TAG, OS litter); any other entry is a repo or a warning (not a folder, no "--", unknown type, no
// snapshots/, refs/ a file, a file directly in snapshots/, a broken snapshot symlink, a ref to a commit with
// no snapshot). Sizes come from the resolved snapshot targets: a blob shared by several snapshots counts
// once. blobs/, trees/, .no_exist/ and hfget/ are not inspected, except to flag a revision whose download is
// not finished (store/unfinished_revision.hpp).
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string_view>

#include "hfget/cache.hpp"
#include "store/unfinished_revision.hpp"
#include "util/read_text_file.hpp"

namespace hfget {
namespace {

// huggingface_hub's FILES_TO_IGNORE, plus the two entries scan_cache_dir skips at the top level.
constexpr std::array<std::string_view, 3> kOsLitter{".DS_Store", "Thumbs.db", "desktop.ini"};
constexpr std::array<std::string_view, 2> kCacheInternals{".locks", "CACHEDIR.TAG"};
constexpr std::uint64_t kMaxRefBytes = 4096;

bool is_os_litter(const std::string& name) {
  return std::find(kOsLitter.begin(), kOsLitter.end(), name) != kOsLitter.end();
}

// scan_cache_dir's CorruptedCacheException: the repo is reported and left out.
struct CorruptedEntry {
  std::string message;
};

struct BlobStat {
  std::uint64_t size = 0;
  std::int64_t modified = 0;
  std::int64_t accessed = 0;
};

std::optional<struct stat> stat_following(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return info;
}

std::map<std::string, std::set<std::string>> read_refs_by_commit(const std::filesystem::path& refs_dir) {
  std::map<std::string, std::set<std::string>> refs_by_commit;
  std::error_code error;
  if (!std::filesystem::exists(refs_dir, error)) return refs_by_commit;
  if (!std::filesystem::is_directory(refs_dir, error)) {
    throw CorruptedEntry{fmt::format("Refs directory cannot be a file: {}", refs_dir.string())};
  }
  for (auto it = std::filesystem::recursive_directory_iterator(refs_dir, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_directory() || is_os_litter(it->path().filename().string())) continue;
    // Read without stripping, as the Python client does: a trailing newline makes the ref point nowhere.
    const std::optional<std::string> commit = util::read_text_file(it->path(), kMaxRefBytes);
    refs_by_commit[commit.value_or("")].insert(it->path().lexically_relative(refs_dir).generic_string());
  }
  return refs_by_commit;
}

// Python's str.replace("--", "/"), written without std::string::replace (g++ 12 warns falsely about it).
std::string double_dashes_to_slashes(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "--") == 0) {
      out += '/';
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

CachedRepo scan_repo(const std::filesystem::path& repo_path) {
  std::error_code error;
  if (!std::filesystem::is_directory(repo_path, error)) {
    throw CorruptedEntry{fmt::format("Repo path is not a directory: {}", repo_path.string())};
  }
  const std::string folder = repo_path.filename().string();
  const std::size_t separator = folder.find("--");
  if (separator == std::string::npos) {
    throw CorruptedEntry{fmt::format("Repo path is not a valid HuggingFace cache directory: {}", repo_path.string())};
  }
  // "models--org--name" → ("model", "org/name"), by scan_cache_dir's own string rules.
  const std::string type_name = folder.substr(0, separator).substr(0, separator == 0 ? 0 : separator - 1);
  const std::string repo_id = double_dashes_to_slashes(folder.substr(separator + 2));
  const std::optional<RepoType> type = parse_repo_type(type_name);
  if (!type) {
    throw CorruptedEntry{fmt::format("Repo type must be `dataset`, `model` or `space`, found `{}` ({}).", type_name,
                                     repo_path.string())};
  }
  const std::filesystem::path snapshots_dir = repo_path / "snapshots";
  if (!std::filesystem::is_directory(snapshots_dir, error)) {
    throw CorruptedEntry{fmt::format("Snapshots dir doesn't exist in cached repo: {}", snapshots_dir.string())};
  }
  std::map<std::string, std::set<std::string>> refs_by_commit = read_refs_by_commit(repo_path / "refs");

  CachedRepo repo;
  repo.type = *type;
  repo.repo_id = repo_id;
  repo.path = repo_path;
  std::map<std::filesystem::path, BlobStat> blobs;  // by resolved path: each counted once
  std::vector<std::filesystem::path> revision_dirs;
  for (const auto& entry : std::filesystem::directory_iterator(snapshots_dir, error))
    revision_dirs.push_back(entry.path());
  std::sort(revision_dirs.begin(), revision_dirs.end());
  for (const std::filesystem::path& revision_dir : revision_dirs) {
    if (is_os_litter(revision_dir.filename().string())) continue;
    if (!std::filesystem::is_directory(revision_dir, error)) {
      throw CorruptedEntry{fmt::format("Snapshots folder corrupted. Found a file: {}", revision_dir.string())};
    }
    CachedRevision revision;
    revision.commit = revision_dir.filename().string();
    std::set<std::filesystem::path> revision_blobs;
    for (auto it = std::filesystem::recursive_directory_iterator(revision_dir, error);
         !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
      if (it->is_directory()) continue;
      std::error_code resolve_error;
      const std::filesystem::path blob = std::filesystem::canonical(it->path(), resolve_error);
      const std::optional<struct stat> info = resolve_error ? std::nullopt : stat_following(blob);
      if (!info) {
        throw CorruptedEntry{fmt::format("Blob missing (broken symlink): {}",
                                         std::filesystem::weakly_canonical(it->path(), resolve_error).string())};
      }
      blobs.try_emplace(
          blob, BlobStat{static_cast<std::uint64_t>(info->st_size), info->st_mtim.tv_sec, info->st_atim.tv_sec});
      revision_blobs.insert(blob);
      ++revision.file_count;
    }
    for (const std::filesystem::path& blob : revision_blobs) {
      revision.size_on_disk += blobs[blob].size;
      revision.last_modified_unix = std::max(revision.last_modified_unix, blobs[blob].modified);
    }
    if (revision_blobs.empty()) {
      if (const std::optional<struct stat> info = stat_following(revision_dir))
        revision.last_modified_unix = info->st_mtim.tv_sec;
    }
    const store::UnfinishedFiles unfinished = store::unfinished_files(repo_path, revision.commit);
    revision.files_missing = unfinished.missing;
    revision.partial_files = unfinished.partial;
    if (const auto refs = refs_by_commit.find(revision.commit); refs != refs_by_commit.end()) {
      revision.refs.assign(refs->second.begin(), refs->second.end());
      refs_by_commit.erase(refs);
    }
    repo.revisions.push_back(std::move(revision));
  }
  if (!refs_by_commit.empty()) {
    std::string dangling;
    for (const auto& [commit, names] : refs_by_commit) {
      for (const std::string& name : names)
        dangling += fmt::format("{}{} -> '{}'", dangling.empty() ? "" : ", ", name, commit);
    }
    throw CorruptedEntry{
        fmt::format("Reference(s) refer to missing commit hashes: {} ({})", dangling, repo_path.string())};
  }
  repo.file_count = blobs.size();
  for (const auto& [path, blob] : blobs) {
    repo.size_on_disk += blob.size;
    repo.last_modified_unix = std::max(repo.last_modified_unix, blob.modified);
    repo.last_accessed_unix = std::max(repo.last_accessed_unix, blob.accessed);
  }
  if (blobs.empty()) {
    if (const std::optional<struct stat> info = stat_following(repo_path)) {
      repo.last_modified_unix = info->st_mtim.tv_sec;
      repo.last_accessed_unix = info->st_atim.tv_sec;
    }
  }
  return repo;
}

}  // namespace

CacheScan scan_cache(const std::filesystem::path& cache_dir) {
  CacheScan scan;
  scan.cache_dir = cache_dir;
  std::error_code error;
  scan.exists = std::filesystem::is_directory(cache_dir, error);
  if (!scan.exists) return scan;
  std::vector<std::filesystem::path> entries;
  for (const auto& entry : std::filesystem::directory_iterator(cache_dir, error)) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  for (const std::filesystem::path& entry : entries) {
    const std::string name = entry.filename().string();
    if (is_os_litter(name) ||
        std::find(kCacheInternals.begin(), kCacheInternals.end(), name) != kCacheInternals.end()) {
      continue;
    }
    try {
      scan.repos.push_back(scan_repo(entry));
      scan.size_on_disk += scan.repos.back().size_on_disk;
    } catch (const CorruptedEntry& corrupted) {
      scan.warnings.push_back(CacheWarning{entry, corrupted.message});
    }
  }
  std::sort(scan.repos.begin(), scan.repos.end(), [](const CachedRepo& a, const CachedRepo& b) {
    return std::pair(to_string(a.type), a.repo_id) < std::pair(to_string(b.type), b.repo_id);
  });
  return scan;
}

}  // namespace hfget
