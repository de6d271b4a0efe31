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

/// hfget/<commit>.json under the repo's cache folder, or under .cache/huggingface/ of a local dir: places the
/// Python client never reads.
std::filesystem::path record_path_in_cache(const std::filesystem::path& cache_dir, const RepoId& repo,
                                           const std::string& commit);
std::filesystem::path record_path_in_local_dir(const std::filesystem::path& local_dir, const std::string& commit);

/// Merges `record` into the file at `path` (union of selections) and writes it atomically. The folder must exist.
void write_download_record(const std::filesystem::path& path, const DownloadRecord& record);
std::optional<DownloadRecord> read_download_record(const std::filesystem::path& path);

}  // namespace hfget::store
