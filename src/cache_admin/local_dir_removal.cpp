// SPDX-License-Identifier: MIT
// `hfget rm --local-dir DIR` removes what hfget put there and nothing else. A directory counts as hfget's
// only when .cache/huggingface/hfget/ holds a download record; a file is removed only when a record lists it,
// its .metadata says it is unchanged since the download (the Python client's own staleness rule), AND its
// bytes are provably the ones hfget checked: either hfget's record of published files vouches for this very
// inode, unchanged (store/published_files.hpp), or, for a download older than that record, its size and hash
// match the recorded listing. Records and metadata are plain files that something else could have written
// (a hostile listing once could); none of them alone is enough to delete a user's file. Then the metadata of
// the removed files, hfget's partial files and records, and the folders this leaves empty go; anything else
// stays, and the directory with it.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "cache_admin/removal_lock.hpp"
#include "cache_admin/remove_within.hpp"
#include "crypto/content_hasher.hpp"
#include "hfget/cache.hpp"
#include "hfget/error.hpp"
#include "io/file_reads.hpp"
#include "store/download_metadata.hpp"
#include "store/download_record.hpp"
#include "store/layout.hpp"
#include "store/published_files.hpp"
#include "store/repo_path.hpp"

namespace hfget {
namespace {

const std::filesystem::path kMetadataRoot = std::filesystem::path(".cache") / "huggingface";

bool is_commit_name(const std::string& text) {
  return text.size() == 40 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::optional<struct stat> lstat_of(const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return std::nullopt;
  return info;
}

bool is_real_directory(const std::filesystem::path& path) {
  const std::optional<struct stat> info = lstat_of(path);
  return info && S_ISDIR(info->st_mode);
}

// True when every folder from root down to the parent of `relative` is a real directory (no symlink on the
// way).
bool reached_through_directories(const std::filesystem::path& root, const std::filesystem::path& relative) {
  std::filesystem::path current = root;
  for (const std::filesystem::path& component : relative.parent_path()) {
    current /= component;
    if (!is_real_directory(current)) return false;
  }
  return true;
}

std::filesystem::path checked_local_dir(const std::filesystem::path& local_dir) {
  const std::optional<struct stat> info = lstat_of(local_dir);
  if (!info) throw Error(ErrorCode::kUsage, fmt::format("{}: no such directory", local_dir.string()), local_dir);
  if (S_ISLNK(info->st_mode)) {
    throw Error(ErrorCode::kUsage, fmt::format("{} is a symlink; pass the directory it points to", local_dir.string()),
                local_dir);
  }
  if (!S_ISDIR(info->st_mode)) {
    throw Error(ErrorCode::kUsage, fmt::format("{} is not a directory", local_dir.string()), local_dir);
  }
  return local_dir;
}

std::vector<store::DownloadRecord> read_records(const std::filesystem::path& local_dir) {
  std::vector<store::DownloadRecord> records;
  const std::filesystem::path state_dir = store::state_dir_in_local_dir(local_dir);
  if (!reached_through_directories(local_dir, kMetadataRoot / "hfget" / "x") || !is_real_directory(state_dir)) {
    return records;
  }
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(state_dir, error)) {
    const std::filesystem::path& path = entry.path();
    if (path.extension() != ".json" || !is_commit_name(path.stem().string())) continue;
    std::optional<store::DownloadRecord> record = store::read_download_record(path);
    if (record && record->commit == path.stem().string()) records.push_back(std::move(*record));
  }
  return records;
}

// What can prove a listed file is hfget's: its record of published files, and the listings it recorded.
struct Evidence {
  store::PublishedFiles published;
  std::map<std::string, RemoteFile> listed;  // by path, from trees/<commit>.json of every record

  Evidence(const std::filesystem::path& local_dir, const std::vector<store::DownloadRecord>& records)
      : published(store::state_dir_in_local_dir(local_dir)) {
    for (const store::DownloadRecord& record : records) {
      if (const auto listing = store::recorded_listing_in_local_dir(local_dir, record.commit)) {
        for (const RemoteFile& file : *listing) listed.emplace(file.path, file);
      }
    }
  }
};

bool content_matches(const std::filesystem::path& file_path, const RemoteFile& listed) {
  crypto::ContentHasher hasher(listed);
  try {
    io::read_file(file_path, [&](std::span<const std::byte> bytes) { hasher.update(bytes); });
  } catch (const Error&) {
    return false;  // unreadable or changing: not provably hfget's
  }
  return hasher.finish_hex() == hasher.expected();
}

// Why a file a record lists is not removed, or nullopt when it is hfget's download, unchanged.
std::optional<std::string> reason_to_keep(const std::filesystem::path& local_dir, const std::string& path,
                                          const Evidence& evidence) {
  if (const std::optional<std::string> unsafe = store::unsafe_path_reason(path)) return "unsafe path: " + *unsafe;
  if (store::is_reserved_metadata_path(path)) return "inside the metadata folder: not a downloaded file";
  if (!reached_through_directories(local_dir, path)) return "a folder on its path is a symlink or not a folder";
  const std::optional<struct stat> info = lstat_of(local_dir / path);
  if (!info || !S_ISREG(info->st_mode)) return "not a regular file";
  const std::optional<store::DownloadMetadata> metadata =
      store::read_download_metadata(store::download_metadata_path(local_dir, path));
  if (!metadata) return "no download metadata for it";
  if (!store::metadata_covers_file(*metadata, local_dir / path)) return "modified after the download";
  if (evidence.published.vouches_for(path, metadata->etag, local_dir / path)) return std::nullopt;
  // Downloaded before hfget kept its record of published files, or written over since: only its bytes tell.
  const auto listed = evidence.listed.find(path);
  if (listed == evidence.listed.end()) return "hfget has no record of checking it and no listing to check it against";
  if (listed->second.size != static_cast<std::uint64_t>(info->st_size)) return "its size is not the listed one";
  if (!content_matches(local_dir / path, listed->second)) return "its content is not the listed one";
  return std::nullopt;
}

std::vector<std::string> files_left(const std::filesystem::path& root) {
  std::vector<std::string> left;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(root, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (!is_real_directory(it->path())) left.push_back(it->path().lexically_relative(root).generic_string());
  }
  std::sort(left.begin(), left.end());
  return left;
}

// hfget's transient files in the metadata folder: partial files, their journals, stale temporaries.
std::vector<std::filesystem::path> hfget_transients(const std::filesystem::path& metadata_root) {
  std::vector<std::filesystem::path> found;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(metadata_root, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.ends_with(".hfget-partial") || name.ends_with(".hfget-journal") || name.ends_with(".hfget-tmp")) {
      found.push_back(it->path());
    }
  }
  return found;
}

void remove_empty_folders_deepest_first(const std::filesystem::path& root, std::vector<std::filesystem::path> folders) {
  std::sort(folders.begin(), folders.end(), [](const auto& a, const auto& b) {
    return std::distance(a.begin(), a.end()) > std::distance(b.begin(), b.end());
  });
  folders.erase(std::unique(folders.begin(), folders.end()), folders.end());
  for (const std::filesystem::path& folder : folders) cache_admin::remove_empty_directory_within(root, folder);
}

// Every folder strictly between root and `path`.
void add_parents(const std::filesystem::path& root, const std::filesystem::path& path,
                 std::vector<std::filesystem::path>& folders) {
  for (std::filesystem::path parent = path.parent_path(); cache_admin::is_within(root, parent) && parent != root;
       parent = parent.parent_path()) {
    folders.push_back(parent);
  }
}

}  // namespace

LocalDirRemovalPlan plan_local_dir_removal(const std::filesystem::path& local_dir) {
  const std::filesystem::path root = checked_local_dir(local_dir);
  const std::vector<store::DownloadRecord> records = read_records(root);
  if (records.empty()) {
    throw Error(ErrorCode::kUsage,
                fmt::format("{} was not created by hfget (no download record in {}); nothing removed", root.string(),
                            (root / kMetadataRoot / "hfget").string()),
                root);
  }
  std::set<std::string> listed;
  for (const store::DownloadRecord& record : records) listed.insert(record.selected.begin(), record.selected.end());
  const Evidence evidence(root, records);
  LocalDirRemovalPlan plan;
  plan.local_dir = root;
  for (const std::string& path : listed) {
    const bool unsafe = store::unsafe_path_reason(path).has_value();
    if (!unsafe && reached_through_directories(root, path) && !lstat_of(root / path)) continue;  // never arrived
    if (std::optional<std::string> reason = reason_to_keep(root, path, evidence)) {
      plan.kept.push_back({path, std::move(*reason)});
      continue;
    }
    plan.files.push_back(path);
    plan.bytes_freed += cache_admin::bytes_below(root / path);
  }
  return plan;
}

LocalDirRemoval remove_local_dir_download(const std::filesystem::path& local_dir) {
  const std::filesystem::path root = plan_local_dir_removal(local_dir).local_dir;
  const std::filesystem::path metadata_root = root / kMetadataRoot;
  const store::TargetLock lock = cache_admin::lock_for_removal(store::state_dir_in_local_dir(root));
  LocalDirRemoval removal;
  removal.plan = plan_local_dir_removal(root);  // again, under the lock
  removal.plan.bytes_freed = 0;
  std::vector<std::filesystem::path> emptied;
  for (const std::string& path : removal.plan.files) {
    removal.plan.bytes_freed += cache_admin::remove_within(root, root / path);
    add_parents(root, root / path, emptied);
    const std::filesystem::path metadata = store::download_metadata_path(root, path);
    cache_admin::remove_within(root, metadata);
    cache_admin::remove_within(root, std::filesystem::path(metadata).replace_extension(".lock"));
    add_parents(root, metadata, emptied);
  }
  for (const std::filesystem::path& transient : hfget_transients(metadata_root)) {
    removal.plan.bytes_freed += cache_admin::remove_within(root, transient);
    add_parents(root, transient, emptied);
  }
  // The per-file locks hfget took for every file it meant to fetch, and the metadata of listed files that are
  // not there (never arrived, or deleted since): files hfget wrote that describe nothing now. A kept file
  // keeps its metadata, which is what the Python client reads it by. Folders are removed only when empty.
  const std::set<std::string> removed(removal.plan.files.begin(), removal.plan.files.end());
  for (const store::DownloadRecord& record : read_records(root)) {
    cache_admin::remove_within(root, metadata_root / "trees" / (record.commit + ".json"));
    for (const std::string& path : record.selected) {
      if (removed.count(path) != 0 || store::unsafe_path_reason(path) || store::is_reserved_metadata_path(path))
        continue;
      const std::filesystem::path metadata = store::download_metadata_path(root, path);
      if (!reached_through_directories(root, std::filesystem::path(metadata).lexically_relative(root))) continue;
      if (!lstat_of(root / path)) {
        cache_admin::remove_within(root, metadata);
        add_parents(root, root / path, emptied);  // the folders made for it, when they are left empty
      }
      cache_admin::remove_within(root, std::filesystem::path(metadata).replace_extension(".lock"));
      add_parents(root, metadata, emptied);
    }
  }
  emptied.push_back(metadata_root / "trees");
  emptied.push_back(metadata_root / "download");
  // Last: hfget's records, state file and the lock file held by `lock` (unlinking a held flock is harmless).
  cache_admin::remove_within(root, store::state_dir_in_local_dir(root));
  remove_empty_folders_deepest_first(root, emptied);
  // The metadata folder goes when only its two marker files are left in it.
  std::vector<std::string> metadata_left = files_left(metadata_root);
  if (is_real_directory(metadata_root) &&
      std::all_of(metadata_left.begin(), metadata_left.end(),
                  [](const std::string& name) { return name == ".gitignore" || name == "CACHEDIR.TAG"; })) {
    cache_admin::remove_within(root, metadata_root);
    cache_admin::remove_empty_directory_within(root, root / ".cache");
  }
  removal.left = files_left(root);
  if (removal.left.empty() && std::filesystem::is_empty(root)) {
    removal.directory_removed = ::rmdir(root.c_str()) == 0;
  }
  return removal;
}

}  // namespace hfget
