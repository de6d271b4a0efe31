// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace hfget::store {

/// <local dir>/.cache/huggingface/download/<path>.metadata (HUB-PROTOCOL §5): three lines, commit, etag and
/// the Unix time of the download, as huggingface_hub writes and reads them.
struct DownloadMetadata {
  std::string commit;
  std::string etag;
  double timestamp = 0;
};

std::filesystem::path download_metadata_path(const std::filesystem::path& local_dir, const std::string& repo_path);

/// nullopt when absent or malformed (the Python client then deletes it; readers here just ignore it).
std::optional<DownloadMetadata> read_download_metadata(const std::filesystem::path& metadata_path);

/// The Python client's staleness rule: metadata is valid only if the file was not modified after it was
/// written (`file mtime - 1 <= timestamp`).
bool metadata_covers_file(const DownloadMetadata& metadata, const std::filesystem::path& file);

}  // namespace hfget::store
