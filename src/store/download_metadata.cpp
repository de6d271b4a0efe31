// SPDX-License-Identifier: MIT
#include "store/download_metadata.hpp"

#include <sys/stat.h>

#include <sstream>

#include "util/read_text_file.hpp"

namespace hfget::store {
namespace {

constexpr std::uint64_t kMaxMetadataBytes = 4096;

}  // namespace

std::filesystem::path download_metadata_path(const std::filesystem::path& local_dir, const std::string& repo_path) {
  return local_dir / ".cache" / "huggingface" / "download" / (repo_path + ".metadata");
}

std::optional<DownloadMetadata> read_download_metadata(const std::filesystem::path& metadata_path) {
  const std::optional<std::string> text = util::read_text_file(metadata_path, kMaxMetadataBytes);
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  DownloadMetadata metadata;
  std::string timestamp;
  if (!std::getline(in, metadata.commit) || !std::getline(in, metadata.etag) || !std::getline(in, timestamp)) {
    return std::nullopt;
  }
  try {
    metadata.timestamp = std::stod(timestamp);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return metadata;
}

bool metadata_covers_file(const DownloadMetadata& metadata, const std::filesystem::path& file) {
  struct stat info {};
  if (::lstat(file.c_str(), &info) != 0) return false;
  const double mtime = static_cast<double>(info.st_mtim.tv_sec) + static_cast<double>(info.st_mtim.tv_nsec) * 1e-9;
  return mtime - 1.0 <= metadata.timestamp;
}

}  // namespace hfget::store
