// SPDX-License-Identifier: MIT
// The HF cache (HUB-PROTOCOL §4): blobs/<etag> hold the bytes, snapshots/<commit>/<path> are relative
// symlinks to them (one extra "../" per sub-folder), refs/<revision> holds the bare commit with no newline
// (the Python client reads it without strip). Our resumable partials are blobs/<etag>.hfget-partial: the
// Python client neither resumes nor prunes that name (`hf cache prune` deletes blobs/*.incomplete).
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "hfget/error.hpp"
#include "store/download_record.hpp"
#include "store/layout.hpp"
#include "store/partial_claim.hpp"
#include "store/repo_path.hpp"
#include "store/tree_cache.hpp"
#include "util/atomic_file.hpp"
#include "util/read_text_file.hpp"
#include "util/thread_random.hpp"

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

// Replaces whatever is at `link` with a symlink to `target`, atomically (symlink to a temporary name, then
// rename over), so a reader never sees the path missing.
void replace_symlink(const std::filesystem::path& link, const std::string& target) {
  char existing[4096];
  const ssize_t length = ::readlink(link.c_str(), existing, sizeof(existing));
  if (length >= 0 && std::string(existing, static_cast<std::size_t>(length)) == target) return;
  const std::filesystem::path temporary =
      link.parent_path() /
      fmt::format(".{:08x}{}", static_cast<std::uint32_t>(util::thread_random()()), util::kTemporarySuffix);
  if (::symlink(target.c_str(), temporary.c_str()) != 0)
    util::throw_file_error("cannot create symlink", temporary, errno);
  if (::rename(temporary.c_str(), link.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    util::throw_file_error("cannot create symlink", link, error);
  }
}

class CacheLayout final : public Layout {
 public:
  CacheLayout(std::filesystem::path cache_dir, RepoId repo, std::string commit)
      : cache_dir_(std::move(cache_dir)),
        repo_(std::move(repo)),
        commit_(std::move(commit)),
        repo_dir_(cache_dir_ / cache_folder_name(repo_)) {}

  std::filesystem::path snapshot_path() const override { return repo_dir_ / "snapshots" / commit_; }

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

  bool is_complete(const RemoteFile& file) const override { return regular_file_has_size(blob_path(file), file.size); }

  std::filesystem::path content_path(const RemoteFile& file) const override { return blob_path(file); }

  void link_existing(const RemoteFile& file) override {
    remove_leftovers(file);
    const std::filesystem::path relative(file.path);
    create_directories_within(snapshot_path(), relative.parent_path());
    std::string target;
    const auto depth = static_cast<std::size_t>(std::count(file.path.begin(), file.path.end(), '/'));
    for (std::size_t i = 0; i < depth + 2; ++i) target += "../";
    target += "blobs/" + file.etag();
    replace_symlink(snapshot_path() / relative, target);
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
    std::move(partial).commit(blob_path(file));
    link_existing(file);
  }

 private:
  std::filesystem::path blob_path(const RemoteFile& file) const { return repo_dir_ / "blobs" / file.etag(); }

  std::filesystem::path cache_dir_;
  RepoId repo_;
  std::string commit_;
  std::filesystem::path repo_dir_;
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
        throw Error(ErrorCode::kInternal,
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

std::unique_ptr<Layout> make_cache_layout(std::filesystem::path cache_dir, RepoId repo, std::string commit) {
  return std::make_unique<CacheLayout>(std::move(cache_dir), std::move(repo), std::move(commit));
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
