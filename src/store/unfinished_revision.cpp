// SPDX-License-Identifier: MIT
// `hfget cache ls` flags a revision a download has not finished: the snapshot folder exists from the first
// published file on (and refs/ from before the first byte), so a scan that counts only what is there shows
// an interrupted 600 GB download as a small, healthy revision.
#include "store/unfinished_revision.hpp"

#include <sys/stat.h>

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "store/download_record.hpp"
#include "store/repo_path.hpp"
#include "store/tree_cache.hpp"

namespace hfget::store {
namespace {

constexpr std::string_view kHfgetPartialSuffix = ".hfget-partial";
constexpr std::string_view kPythonPartialSuffix = ".incomplete";

// blobs/<etag>.hfget-partial, blobs/<etag>.<owner>.hfget-partial (a claimed one), blobs/<etag>.incomplete.
std::map<std::string, std::size_t> partial_files_by_etag(const std::filesystem::path& blobs) {
  std::map<std::string, std::size_t> partials;
  std::error_code error;
  for (std::filesystem::directory_iterator it(blobs, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!name.ends_with(kHfgetPartialSuffix) && !name.ends_with(kPythonPartialSuffix)) continue;
    ++partials[name.substr(0, name.find('.'))];
  }
  return partials;
}

bool in_snapshot(const std::filesystem::path& snapshot, const std::string& path) {
  struct stat info {};
  return !unsafe_path_reason(path) && ::stat((snapshot / path).c_str(), &info) == 0;
}

}  // namespace

UnfinishedFiles unfinished_files(const std::filesystem::path& repo_path, const std::string& commit) {
  UnfinishedFiles unfinished;
  if (unsafe_path_reason(commit)) return unfinished;
  const std::optional<DownloadRecord> record = read_download_record(repo_path / "hfget" / (commit + ".json"));
  const std::optional<std::vector<RemoteFile>> listing = read_tree_cache(repo_path / "trees" / (commit + ".json"));
  if (!record && !listing) return unfinished;
  const std::filesystem::path snapshot = repo_path / "snapshots" / commit;
  const std::map<std::string, std::size_t> partials = partial_files_by_etag(repo_path / "blobs");
  std::set<std::string> missing;
  if (record) {
    for (const std::string& path : record->selected) {
      if (!in_snapshot(snapshot, path)) missing.insert(path);
    }
  }
  std::set<std::string> partial_etags;
  if (listing) {
    for (const RemoteFile& file : *listing) {
      const auto partial = partials.find(file.etag());
      if (partial == partials.end() || in_snapshot(snapshot, file.path)) continue;
      if (!record) missing.insert(file.path);
      if (missing.count(file.path) != 0 && partial_etags.insert(file.etag()).second)
        unfinished.partial += partial->second;
    }
  }
  unfinished.missing = missing.size();
  return unfinished;
}

}  // namespace hfget::store
