// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace hfget::store {

/// What an unfinished download left of one revision in the cache.
struct UnfinishedFiles {
  std::size_t missing = 0;  // files the download selected (or started) that the snapshot does not have
  std::size_t partial =
      0;  // partial files of those in blobs/: hfget's *.hfget-partial, the Python client's *.incomplete
};

/// Reads hfget's download record (<repo>/hfget/<commit>.json: the files selected) and the tree cache
/// (<repo>/trees/<commit>.json: their blobs) of `commit` in the repo folder `repo_path`. A selected file the
/// snapshot lacks is missing; so is a listed file the snapshot lacks whose blob has a partial file (a download
/// the Python client started, which records no selection). Never writes.
UnfinishedFiles unfinished_files(const std::filesystem::path& repo_path, const std::string& commit);

}  // namespace hfget::store
