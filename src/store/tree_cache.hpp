// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hfget/repo.hpp"

namespace hfget::store {

/// trees/<commit>.json as huggingface_hub ≥ 1.22 writes it (json.dump(indent=1), ASCII only, paths sorted,
/// format_version 1). It must be the complete, unfiltered listing of the commit: the Python client uses it to
/// decide whether an offline snapshot is complete.
std::string serialize_tree_cache(const std::vector<RemoteFile>& files);

/// Reads a tree cache file; nullopt when absent, unreadable or of an unknown format (as the Python client).
std::optional<std::vector<RemoteFile>> read_tree_cache(const std::filesystem::path& path);

}  // namespace hfget::store
