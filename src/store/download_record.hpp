// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hfget/repo.hpp"

namespace hfget::store {

/// What hfget records per commit beyond the Python client's files, so that `hfget verify` can work offline:
/// which paths the download selected (trees/<commit>.json already holds every size and hash). Several
/// downloads of the same commit with different selections record the union.
struct DownloadRecord {
  std::string commit;
  std::string revision;
  std::vector<std::string> selected;  // sorted, unique
};

/// hfget's own folder for a target: <cache>/<repo folder>/hfget, or <local dir>/.cache/huggingface/hfget.
/// The Python client never reads it. It holds the download records, the state file, the log of a detached
/// run and the target lock.
std::filesystem::path state_dir_in_cache(const std::filesystem::path& cache_dir, const RepoId& repo);
std::filesystem::path state_dir_in_local_dir(const std::filesystem::path& local_dir);

/// <state dir>/<commit>.json.
std::filesystem::path record_path_in_cache(const std::filesystem::path& cache_dir, const RepoId& repo,
                                           const std::string& commit);
std::filesystem::path record_path_in_local_dir(const std::filesystem::path& local_dir, const std::string& commit);

/// Merges `record` into the file at `path` (union of selections) and writes it atomically. The folder must exist.
void write_download_record(const std::filesystem::path& path, const DownloadRecord& record);
std::optional<DownloadRecord> read_download_record(const std::filesystem::path& path);

}  // namespace hfget::store
