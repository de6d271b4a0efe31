// SPDX-License-Identifier: MIT
// The HF cache (HUB-PROTOCOL §4): blobs/<etag> hold the bytes, snapshots/<commit>/<path> are relative
// symlinks to them (one extra "../" per sub-folder), refs/<revision> holds the bare commit with no newline
// (the Python client reads it without strip). Our resumable partials are blobs/<etag>.hfget-partial: the
// Python client neither resumes nor prunes that name (`hf cache prune` deletes blobs/*.incomplete).
//
// Where the filesystem refuses symlinks (FAT, exFAT, many SMB shares) or HF_HUB_DISABLE_SYMLINKS is set,
// snapshot files are real files, laid out as huggingface_hub's _create_symlink lays them: a blob downloaded
// now is moved into the snapshot (blobs/ keeps nothing of it), one already in blobs/ is copied. Both clients
// then take a snapshot file that exists as complete. hfget does not take the Python client's word for a file
// whose name, unlike a blob's, is not its hash: it keeps a record of the copies it checked
// (hfget/published.jsonl, as in a local dir) and hashes once any copy the record does not vouch for.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>

#include "hfget/error.hpp"
#include "store/content_check.hpp"
#include "store/download_record.hpp"
#include "store/file_copy.hpp"
#include "store/layout.hpp"
#include "store/partial_claim.hpp"
#include "store/published_files.hpp"
#include "store/repo_path.hpp"
#include "store/symlink_support.hpp"
#include "store/tree_cache.hpp"
#include "util/atomic_file.hpp"
#include "util/read_text_file.hpp"

namespace hfget::store {

const char* const kCacheDirTag =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by huggingface_hub.\n"
    "# For information about cache directory tags, see:\n"
    "#\thttps://bford.info/cachedir/\n";

namespace {

bool regular_file_has_size(const std::filesystem::path& path, std::uint64_t size) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && static_cast<std::uint64_t>(info.st_size) == size;
}

// True when every folder on the way from `root` to root/relative is a real folder, not a symlink. A file
// that is copied (and so made readable in the snapshot) must be one of the cache's own, not one a symlinked
// folder leads to.
bool reached_without_symlinks(const std::filesystem::path& root, const std::filesystem::path& relative) {
  std::filesystem::path current = root;
  for (const std::filesystem::path& folder : relative.parent_path()) {
    current /= folder;
    struct stat info {};
    if (::lstat(current.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return false;
  }
  return true;
}

bool same_filesystem(const std::filesystem::path& a, const std::filesystem::path& b) {
  struct stat first {};
  struct stat second {};
  return ::stat(a.c_str(), &first) == 0 && ::stat(b.c_str(), &second) == 0 && first.st_dev == second.st_dev;
}

// Replaces whatever is at `link` with a symlink to `target`, atomically (symlink to a temporary name, then
// rename over), so a reader never sees the path missing. False, with nothing changed, when the filesystem
// refuses symlinks.
bool replace_symlink(const std::filesystem::path& link, const std::string& target) {
  char existing[4096];
  const ssize_t length = ::readlink(link.c_str(), existing, sizeof(existing));
  if (length >= 0 && std::string(existing, static_cast<std::size_t>(length)) == target) return true;
  // Named with this process as owner, so that a kill -9 between symlink and rename leaves a temporary the
  // next run sweeps at once (an unowned one would wait a minute, and a resume would find it in the snapshot).
  const std::filesystem::path temporary = util::temporary_path_beside(link);
  if (::symlink(target.c_str(), temporary.c_str()) != 0) {
    if (is_symlink_refusal(errno)) return false;
    util::throw_file_error("cannot create symlink", temporary, errno);
  }
  if (::rename(temporary.c_str(), link.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    util::throw_file_error("cannot create symlink", link, error);
  }
  return true;
}

class CacheLayout final : public Layout {
 public:
  CacheLayout(std::filesystem::path cache_dir, RepoId repo, std::string commit, SnapshotFiles snapshot_files)
      : cache_dir_(std::move(cache_dir)),
        repo_(std::move(repo)),
        commit_(std::move(commit)),
        repo_dir_(cache_dir_ / cache_folder_name(repo_)),
        published_(state_dir_in_cache(cache_dir_, repo_)),
        real_files_(snapshot_files == SnapshotFiles::kRealFiles) {}

  std::filesystem::path snapshot_path() const override { return repo_dir_ / "snapshots" / commit_; }
  std::filesystem::path state_dir() const override { return state_dir_in_cache(cache_dir_, repo_); }

  // Blobs are named by their content and never rewritten in place. A snapshot's real-file copies (no symlinks)
  // are not offered: their blob was moved into one snapshot, and nothing says which.
  std::optional<std::filesystem::path> find_content(const std::string& sha256, std::uint64_t size) const override {
    std::filesystem::path blob = repo_dir_ / "blobs" / sha256;
    if (sha256.size() != 64 || !regular_file_has_size(blob, size)) return std::nullopt;
    return blob;
  }

  void prepare(const Snapshot& snapshot, const std::vector<RemoteFile>& selected,
               const std::string& revision) override {
    std::filesystem::create_directories(cache_dir_);
    const std::filesystem::path tag = cache_dir_ / "CACHEDIR.TAG";
    if (!std::filesystem::exists(tag)) util::write_file_atomically(tag, kCacheDirTag);
    const std::string folder = cache_folder_name(repo_);
    create_directories_within(cache_dir_, std::filesystem::path(folder) / "blobs");
    create_directories_within(cache_dir_, std::filesystem::path(folder) / "snapshots" / commit_);
    create_directories_within(cache_dir_, std::filesystem::path(".locks") / folder);
    create_directories_within(cache_dir_, std::filesystem::path(folder) / "trees");
    create_directories_within(cache_dir_, std::filesystem::path(folder) / "hfget");
    // What a kill -9 left between creating a temporary and renaming it (we hold the target lock).
    for (const char* sub_dir : {"refs", "trees", "hfget", "snapshots"})
      util::remove_stale_temporaries(repo_dir_ / sub_dir);
    if (revision != commit_) {
      const std::filesystem::path ref = std::filesystem::path("refs") / revision;
      create_directories_within(repo_dir_, ref.parent_path());
      util::write_file_atomically(repo_dir_ / ref, commit_);
    }
    util::write_file_atomically(repo_dir_ / "trees" / (commit_ + ".json"), serialize_tree_cache(snapshot.files));
    write_download_record(record_path_in_cache(cache_dir_, repo_, commit_),
                          DownloadRecord{commit_, revision, selected_paths(selected)});
  }

  // Either form is complete, whichever this run writes: a copy hfget checked, or the blob. So is a checked
  // copy of the same bytes in another snapshot (or at another path), which link_existing copies: where the
  // Python client moved a blob into a snapshot it downloads it again for the next commit; hfget does not.
  bool is_complete(const RemoteFile& file) const override {
    return holds_checked_copy(file) || regular_file_has_size(blob_path(file), file.size) ||
           checked_copy_elsewhere(file).has_value();
  }

  // A copy in the snapshot that no record vouches for (the Python client's, or one published just before a
  // kill -9): hashed once, then recorded and kept as it is.
  bool adopt_unrecorded(const RemoteFile& file, const std::stop_token& stop) override {
    const std::filesystem::path copy = snapshot_file(file);
    if (!holds_listed_content(copy, file, stop)) return false;
    published_.record(record_key(file), file.etag(), copy);
    return true;
  }

  // Where the bytes a user would load are: the snapshot's own copy where there are no symlinks (the blob
  // may be gone, moved into the snapshot, or be the source a copy was made from), else the blob.
  std::filesystem::path content_path(const RemoteFile& file) const override {
    std::error_code error;
    const std::filesystem::path copy = snapshot_file(file);
    if (std::filesystem::symlink_status(copy, error).type() == std::filesystem::file_type::regular) return copy;
    return blob_path(file);
  }

  void link_existing(const RemoteFile& file) override {
    remove_leftovers(file);
    if (holds_checked_copy(file)) return;
    create_directories_within(snapshot_path(), std::filesystem::path(file.path).parent_path());
    std::filesystem::path source = blob_path(file);
    if (regular_file_has_size(source, file.size)) {
      if (link_to_blob(file)) return;
      if (!reached_without_symlinks(repo_dir_, std::filesystem::path("blobs") / file.etag())) {
        throw Error(ErrorCode::kInternal,
                    fmt::format("{}: '{}' is a symlink; refusing to copy through it", file.path,
                                (repo_dir_ / "blobs").string()),
                    repo_dir_ / "blobs");
      }
    } else if (std::optional<std::filesystem::path> copy = checked_copy_elsewhere(file)) {
      source = std::move(*copy);
    }
    // No symlinks: the blob stays where it is (other snapshots may link to it), the snapshot gets a copy.
    copy_file_atomically(source, snapshot_file(file));
    published_.record(record_key(file), file.etag(), snapshot_file(file));
  }

  std::filesystem::path partial_path(const RemoteFile& file) const override {
    return repo_dir_ / "blobs" / (file.etag() + ".hfget-partial");
  }

  std::filesystem::path lock_path(const RemoteFile& file) const override {
    return cache_dir_ / ".locks" / cache_folder_name(repo_) / (file.etag() + ".lock");
  }

  PartialFile open_partial(const RemoteFile& file) override {
    create_directories_within(cache_dir_, std::filesystem::path(cache_folder_name(repo_)) / "blobs");
    return open_own_partial(file);
  }

  FileLock lock(const RemoteFile& file, const std::stop_token& stop) override {
    create_directories_within(cache_dir_, std::filesystem::path(".locks") / cache_folder_name(repo_));
    return FileLock::acquire(lock_path(file), stop);
  }

  void publish(const RemoteFile& file, PartialFile&& partial) override {
    create_directories_within(snapshot_path(), std::filesystem::path(file.path).parent_path());
    if (symlinks_in_use()) {
      std::move(partial).commit(blob_path(file));
      if (link_to_blob(file)) {
        remove_leftovers(file);
        return;
      }
      // The snapshot folder refused the link after all: the new blob moves into it, as in the Python client.
      move_blob_into_snapshot(file);
    } else if (same_filesystem(partial.path().parent_path(), snapshot_file(file).parent_path())) {
      std::move(partial).commit(snapshot_file(file));
    } else {
      std::move(partial).commit(blob_path(file));
      move_blob_into_snapshot(file);
    }
    published_.record(record_key(file), file.etag(), snapshot_file(file));
    remove_leftovers(file);
  }

 private:
  std::filesystem::path blob_path(const RemoteFile& file) const { return repo_dir_ / "blobs" / file.etag(); }
  std::filesystem::path snapshot_file(const RemoteFile& file) const { return snapshot_path() / file.path; }
  // The record holds every commit's copies: keyed by their path in the repo folder.
  std::string record_key(const RemoteFile& file) const { return "snapshots/" + commit_ + "/" + file.path; }

  // A rename within the repo folder; where snapshots/ is another mount than blobs/ (EXDEV), a copy and then
  // the blob removed, as Python's shutil.move does.
  void move_blob_into_snapshot(const RemoteFile& file) {
    if (::rename(blob_path(file).c_str(), snapshot_file(file).c_str()) == 0) return;
    if (errno != EXDEV) util::throw_file_error("cannot publish", snapshot_file(file), errno);
    copy_file_atomically(blob_path(file), snapshot_file(file));
    ::unlink(blob_path(file).c_str());
  }

  bool holds_checked_copy(const RemoteFile& file) const {
    return published_.vouches_for(record_key(file), file.etag(), snapshot_file(file));
  }

  // Only a key of the form snapshots/<...> reached through real folders: the record is a file in the cache,
  // which whoever can write the cache can write, and a copy must never read from outside it.
  std::optional<std::filesystem::path> checked_copy_elsewhere(const RemoteFile& file) const {
    for (const std::string& key : published_.paths_with_etag(file.etag())) {
      if (key == record_key(file) || !key.starts_with("snapshots/") || unsafe_path_reason(key) ||
          !reached_without_symlinks(repo_dir_, key)) {
        continue;
      }
      if (published_.vouches_for(key, file.etag(), repo_dir_ / key)) return repo_dir_ / key;
    }
    return std::nullopt;
  }

  // Points the snapshot file at its blob; false (nothing changed) where this run writes real files: by
  // request, because the repo folder refused a probe link, or because this link was refused.
  bool link_to_blob(const RemoteFile& file) {
    if (!symlinks_in_use()) return false;
    std::string target;
    const auto depth = static_cast<std::size_t>(std::count(file.path.begin(), file.path.end(), '/'));
    for (std::size_t i = 0; i < depth + 2; ++i) target += "../";
    target += "blobs/" + file.etag();
    if (replace_symlink(snapshot_file(file), target)) return true;
    use_real_files();
    return false;
  }

  bool symlinks_in_use() {
    if (!real_files_) {
      std::call_once(probe_once_, [this] {
        create_directories_within(cache_dir_, std::filesystem::path(cache_folder_name(repo_)) / "hfget");
        if (!symlinks_supported_in(repo_dir_ / "hfget")) use_real_files();
      });
    }
    return !real_files_;
  }

  void use_real_files() {
    if (!real_files_.exchange(true)) {
      spdlog::info(
          "{} does not support symlinks: snapshot files are written as real files, as huggingface_hub "
          "does there",
          repo_dir_.string());
    }
  }

  std::filesystem::path cache_dir_;
  RepoId repo_;
  std::string commit_;
  std::filesystem::path repo_dir_;
  PublishedFiles published_;
  std::atomic<bool> real_files_;
  std::once_flag probe_once_;
};

}  // namespace

std::vector<std::string> selected_paths(const std::vector<RemoteFile>& files) {
  std::vector<std::string> paths;
  paths.reserve(files.size());
  for (const RemoteFile& file : files) paths.push_back(file.path);
  return paths;
}

std::uint64_t Layout::partial_bytes(const RemoteFile& file) const {
  std::uint64_t most = 0;
  if (!leftovers_.may_have_leftovers(partial_path(file))) return most;
  for (const PartialCandidate& candidate : find_partials(partial_path(file))) {
    if (!candidate.owner_alive) most = std::max(most, std::min(candidate.bytes, file.size));
  }
  return most;
}

void Layout::check_paths(const std::vector<RemoteFile>& files) const {
  const std::filesystem::path root = snapshot_path();
  for (const RemoteFile& file : files) {
    std::filesystem::path current = root;
    for (const std::filesystem::path& component : std::filesystem::path(file.path)) {
      current /= component;
      struct stat info {};
      if (::lstat(current.c_str(), &info) != 0) break;  // nothing there yet: it will be created as a folder
      const bool last = current == root / file.path;
      if (S_ISLNK(info.st_mode) && !last) {
        throw Error(ErrorCode::kInternal,
                    fmt::format("{}: '{}' is a symlink; refusing to write through it", file.path, current.string()),
                    current);
      }
      if (last ? S_ISDIR(info.st_mode) : !S_ISDIR(info.st_mode)) {
        throw Error(ErrorCode::kNotWritable,
                    fmt::format("{}: '{}' is in the way (expected a {})", file.path, current.string(),
                                last ? "file" : "folder"),
                    current);
      }
    }
  }
}

void Layout::remove_leftovers(const RemoteFile& file) const {
  if (leftovers_.may_have_leftovers(partial_path(file))) remove_abandoned_partials(partial_path(file));
}

PartialFile Layout::open_own_partial(const RemoteFile& file) {
  const std::filesystem::path shared_name = partial_path(file);
  return open_private_partial(shared_name, leftovers_.may_have_leftovers(shared_name));
}

std::unique_ptr<Layout> make_cache_layout(std::filesystem::path cache_dir, RepoId repo, std::string commit,
                                          SnapshotFiles snapshot_files) {
  return std::make_unique<CacheLayout>(std::move(cache_dir), std::move(repo), std::move(commit), snapshot_files);
}

std::optional<std::string> recorded_commit_in_cache(const std::filesystem::path& cache_dir, const RepoId& repo,
                                                    const std::string& revision) {
  return util::read_text_file(cache_dir / cache_folder_name(repo) / "refs" / revision, 4096);
}

std::optional<std::vector<RemoteFile>> recorded_listing_in_cache(const std::filesystem::path& cache_dir,
                                                                 const RepoId& repo, const std::string& commit) {
  return read_tree_cache(cache_dir / cache_folder_name(repo) / "trees" / (commit + ".json"));
}

}  // namespace hfget::store
