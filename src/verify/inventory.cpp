// SPDX-License-Identifier: MIT
#include "verify/inventory.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace hfget::verify {
namespace {

std::set<std::string> regular_files_under(const std::filesystem::path& root) {
  std::set<std::string> files;
  std::error_code error;
  std::filesystem::recursive_directory_iterator it(root, error);
  for (; !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    const std::filesystem::path relative = it->path().lexically_relative(root);
    // A local dir's metadata (.cache/huggingface) is the Python client's and ours, not the repo's.
    if (it.depth() == 0 && it->path().filename() == ".cache" && it->is_directory()) {
      it.disable_recursion_pending();
      continue;
    }
    std::error_code status_error;
    if (it->is_regular_file(status_error)) files.insert(relative.generic_string());
  }
  return files;
}

std::string blob_link_problem(const std::filesystem::path& link, const std::string& expected_etag) {
  char target[4096];
  const ssize_t length = ::readlink(link.c_str(), target, sizeof(target) - 1);
  if (length < 0) return {};  // a real file instead of a link (e.g. HF_HUB_DISABLE_SYMLINKS): judged by its bytes
  const std::filesystem::path target_path(std::string(target, static_cast<std::size_t>(length)));
  if (target_path.filename() != expected_etag) {
    return "the snapshot link points to blob " + target_path.filename().string() + ", the listing says " +
           expected_etag;
  }
  return {};
}

}  // namespace

Inventory take_inventory(const SnapshotOnDisk& snapshot) {
  Inventory inventory;
  inventory.on_disk = regular_files_under(snapshot.root);
  inventory.has_listing = snapshot.listing.has_value();
  if (snapshot.listing) {
    for (const RemoteFile& file : *snapshot.listing) inventory.upstream.insert(file.path);
  } else {
    inventory.upstream = inventory.on_disk;
  }
  inventory.selected = snapshot.selected ? *snapshot.selected : inventory.upstream;

  const auto add = [&](const std::string& path, std::optional<RemoteFile> remote) {
    ExpectedFile file{path, std::move(remote), false, 0, {}};
    struct stat info {};
    const std::filesystem::path on_disk = snapshot.root / path;
    if (::stat(on_disk.c_str(), &info) == 0 && S_ISREG(info.st_mode)) {
      file.present = true;
      file.size_on_disk = static_cast<std::uint64_t>(info.st_size);
    }
    if (snapshot.is_cache_snapshot && file.remote) file.link_problem = blob_link_problem(on_disk, file.remote->etag());
    inventory.expected.push_back(std::move(file));
  };
  if (snapshot.listing) {
    for (const RemoteFile& remote : *snapshot.listing) {
      if (inventory.selected.count(remote.path) != 0) add(remote.path, remote);
    }
  } else {
    for (const std::string& path : inventory.on_disk) add(path, std::nullopt);
  }
  return inventory;
}

}  // namespace hfget::verify
