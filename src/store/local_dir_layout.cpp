// SPDX-License-Identifier: MIT
// A --local-dir download (HUB-PROTOCOL §5): real files at their repo paths, and under .cache/huggingface/
// the metadata huggingface_hub writes (download/<path>.metadata: commit, etag, timestamp), so that
// `hf download --local-dir` later sees the files as up to date. The metadata is written after the final
// rename: the Python client ignores metadata older than the file's mtime. Nothing is written outside the
// local dir (the Python client also writes refs/ in the HF cache; we do not).
#include <fmt/format.h>
#include <sys/stat.h>

#include <chrono>
#include <climits>
#include <fstream>
#include <sstream>

#include "hfget/error.hpp"
#include "store/content_check.hpp"
#include "store/download_metadata.hpp"
#include "store/download_record.hpp"
#include "store/layout.hpp"
#include "store/partial_claim.hpp"
#include "store/published_files.hpp"
#include "store/repo_path.hpp"
#include "store/tree_cache.hpp"
#include "util/atomic_file.hpp"
#include "util/process_owner.hpp"

namespace hfget::store {
namespace {

const std::filesystem::path kMetadataRoot = std::filesystem::path(".cache") / "huggingface";

double seconds_since_epoch() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class LocalDirLayout final : public Layout {
 public:
  LocalDirLayout(std::filesystem::path local_dir, std::string commit)
      : root_(std::move(local_dir)), commit_(std::move(commit)), published_(state_dir_in_local_dir(root_)) {}

  std::filesystem::path state_dir() const override { return state_dir_in_local_dir(root_); }
  std::filesystem::path snapshot_path() const override {
    std::error_code error;
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(root_, error);
    return error ? std::filesystem::absolute(root_) : canonical;
  }

  void prepare(const Snapshot& snapshot, const std::vector<RemoteFile>& selected,
               const std::string& revision) override {
    std::filesystem::create_directories(root_);
    create_directories_within(root_, kMetadataRoot / "download");
    create_directories_within(root_, kMetadataRoot / "trees");
    create_directories_within(root_, kMetadataRoot / "hfget");
    const std::filesystem::path metadata_root = root_ / kMetadataRoot;
    // What a kill -9 left between creating a temporary and renaming it (we hold the target lock).
    util::remove_stale_temporaries(metadata_root);
    if (!std::filesystem::exists(metadata_root / ".gitignore"))
      util::write_file_atomically(metadata_root / ".gitignore", "*");
    if (!std::filesystem::exists(metadata_root / "CACHEDIR.TAG")) {
      util::write_file_atomically(metadata_root / "CACHEDIR.TAG", kCacheDirTag);
    }
    util::write_file_atomically(metadata_root / "trees" / (commit_ + ".json"), serialize_tree_cache(snapshot.files));
    write_download_record(record_path_in_local_dir(root_, commit_),
                          DownloadRecord{commit_, revision, selected_paths(selected)});
  }

  bool is_complete(const RemoteFile& file) const override {
    struct stat info {};
    const std::filesystem::path final_path = root_ / file.path;
    if (::lstat(final_path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) ||
        static_cast<std::uint64_t>(info.st_size) != file.size) {
      return false;
    }
    const std::optional<DownloadMetadata> metadata = read_download_metadata(metadata_path(file));
    // The Python client's staleness rule (a file modified after its metadata was written is not trusted),
    // and hfget's own: the metadata is a claim anyone could have written, so only a file hfget itself
    // checked, unchanged since (same inode, same ctime), skips the hash. Any other is hashed once by
    // adopt_unrecorded() and recorded then.
    return metadata && metadata->etag == file.etag() && metadata_covers_file(*metadata, final_path) &&
           published_.vouches_for(file.path, file.etag(), final_path);
  }

  std::filesystem::path content_path(const RemoteFile& file) const override { return root_ / file.path; }

  // Only what hfget itself checked, unchanged since: a file of the same name and size may have been edited.
  // The paths come from published.jsonl, a file in the target that anyone who can write there can edit: one
  // that is not a safe repo path, or that leads through a symbolic link, is no source (it could name a file
  // outside the target, whose bytes would then be copied into it).
  std::optional<std::filesystem::path> find_content(const std::string& sha256, std::uint64_t size) const override {
    for (const std::string& path : published_.paths_with_etag(sha256)) {
      if (unsafe_path_reason(path) || leads_through_a_link(path)) continue;
      const std::filesystem::path file = root_ / path;
      std::error_code error;
      if (published_.vouches_for(path, sha256, file) && std::filesystem::file_size(file, error) == size && !error) {
        return file;
      }
    }
    return std::nullopt;
  }

  bool leads_through_a_link(const std::string& path) const {
    std::filesystem::path at = root_;
    for (const std::filesystem::path& part : std::filesystem::path(path)) {
      at /= part;
      std::error_code error;
      if (std::filesystem::symlink_status(at, error).type() == std::filesystem::file_type::symlink) return true;
    }
    return false;
  }

  bool adopt_unrecorded(const RemoteFile& file, const std::stop_token& stop) override {
    const std::filesystem::path final_path = root_ / file.path;
    if (!holds_listed_content(final_path, file, stop)) return false;
    write_metadata(file);
    published_.record(file.path, file.etag(), final_path);
    return true;
  }

  void link_existing(const RemoteFile& file) override {
    remove_leftovers(file);
    const std::optional<DownloadMetadata> metadata = read_download_metadata(metadata_path(file));
    if (!metadata || metadata->commit != commit_) write_metadata(file);
  }

  std::filesystem::path partial_path(const RemoteFile& file) const override {
    const std::filesystem::path relative(file.path);
    // The etag in the name keeps a partial of an older version of the file from being resumed. The file's
    // name is cut so that what this process names after it, "<name>.<etag>.<owner>.hfget-journal", fits in
    // 255 bytes with the longest owner token; a repo's names may be 255 bytes long.
    constexpr std::size_t kEtagBytes = 16;
    constexpr std::size_t kSuffixBytes = std::string_view(".hfget-partial").size();
    constexpr std::size_t kNameBytes = NAME_MAX - (1 + kEtagBytes) - (1 + util::kMaxOwnerTokenBytes) - kSuffixBytes;
    return root_ / download_folder(file) /
           fmt::format("{}.{}.hfget-partial", relative.filename().string().substr(0, kNameBytes),
                       file.etag().substr(0, kEtagBytes));
  }

  std::filesystem::path lock_path(const RemoteFile& file) const override {
    return std::filesystem::path(metadata_path(file)).replace_extension(".lock");
  }

  PartialFile open_partial(const RemoteFile& file) override {
    create_directories_within(root_, download_folder(file));
    return open_own_partial(file);
  }

  FileLock lock(const RemoteFile& file, const std::stop_token& stop) override {
    create_directories_within(root_, download_folder(file));
    return FileLock::acquire(lock_path(file), stop);
  }

  void publish(const RemoteFile& file, PartialFile&& partial) override {
    const std::filesystem::path relative(file.path);
    create_directories_within(root_, relative.parent_path());
    std::move(partial).commit(root_ / relative);
    published_.record(file.path, file.etag(), root_ / relative);
    write_metadata(file);
    remove_leftovers(file);  // what runs that are gone left for this file
  }

 private:
  std::filesystem::path metadata_path(const RemoteFile& file) const {
    return root_ / kMetadataRoot / "download" / (file.path + ".metadata");
  }

  // .cache/huggingface/download/<folder of the file>: its metadata, lock and partial file live there.
  static std::filesystem::path download_folder(const RemoteFile& file) {
    return kMetadataRoot / "download" / std::filesystem::path(file.path).parent_path();
  }

  void write_metadata(const RemoteFile& file) {
    const std::filesystem::path path = metadata_path(file);
    create_directories_within(root_, download_folder(file));
    util::write_file_atomically(path, fmt::format("{}\n{}\n{:.6f}\n", commit_, file.etag(), seconds_since_epoch()));
  }

  std::filesystem::path root_;
  std::string commit_;
  PublishedFiles published_;
};

}  // namespace

std::unique_ptr<Layout> make_local_dir_layout(std::filesystem::path local_dir, std::string commit) {
  return std::make_unique<LocalDirLayout>(std::move(local_dir), std::move(commit));
}

std::optional<std::string> recorded_commit_in_local_dir(const std::filesystem::path& local_dir) {
  std::error_code error;
  std::optional<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(local_dir / kMetadataRoot / "trees", error)) {
    if (entry.path().extension() != ".json") continue;
    if (found) return std::nullopt;  // several commits: ambiguous without a revision
    found = entry.path().stem().string();
  }
  return found;
}

std::optional<std::vector<RemoteFile>> recorded_listing_in_local_dir(const std::filesystem::path& local_dir,
                                                                     const std::string& commit) {
  return read_tree_cache(local_dir / kMetadataRoot / "trees" / (commit + ".json"));
}

}  // namespace hfget::store
