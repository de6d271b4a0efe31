// SPDX-License-Identifier: MIT
#include "store/download_record.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "store/json_record.hpp"
#include "util/atomic_file.hpp"

namespace hfget::store {

std::filesystem::path state_dir_in_cache(const std::filesystem::path& cache_dir, const RepoId& repo) {
  return cache_dir / cache_folder_name(repo) / "hfget";
}

std::filesystem::path state_dir_in_local_dir(const std::filesystem::path& local_dir) {
  return local_dir / ".cache" / "huggingface" / "hfget";
}

std::filesystem::path record_path_in_cache(const std::filesystem::path& cache_dir, const RepoId& repo,
                                           const std::string& commit) {
  return state_dir_in_cache(cache_dir, repo) / (commit + ".json");
}

std::filesystem::path record_path_in_local_dir(const std::filesystem::path& local_dir, const std::string& commit) {
  return state_dir_in_local_dir(local_dir) / (commit + ".json");
}

std::optional<DownloadRecord> read_download_record(const std::filesystem::path& path) {
  const std::optional<nlohmann::json> file = read_json_record(path, 1);
  if (!file) return std::nullopt;
  const nlohmann::json& data = *file;
  const auto selected = data.find("selected");
  if (selected == data.end() || !selected->is_array()) return std::nullopt;
  const auto text = [&](const char* key) {
    const auto it = data.find(key);
    return it != data.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  DownloadRecord record;
  record.commit = text("commit");
  record.revision = text("revision");
  for (const nlohmann::json& path_value : *selected) {
    if (path_value.is_string()) record.selected.push_back(path_value.get<std::string>());
  }
  return record;
}

void write_download_record(const std::filesystem::path& path, const DownloadRecord& record) {
  std::set<std::string> selected(record.selected.begin(), record.selected.end());
  if (std::optional<DownloadRecord> existing = read_download_record(path)) {
    selected.insert(existing->selected.begin(), existing->selected.end());
  }
  const nlohmann::json data = {{"format_version", 1},
                               {"commit", record.commit},
                               {"revision", record.revision},
                               {"selected", std::vector<std::string>(selected.begin(), selected.end())}};
  util::write_file_atomically(path, data.dump(1) + "\n");
}

}  // namespace hfget::store
