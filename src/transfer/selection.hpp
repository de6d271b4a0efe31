// SPDX-License-Identifier: MIT
#pragma once

#include <vector>

#include "hfget/download.hpp"
#include "hfget/repo.hpp"

namespace hfget::transfer {

/// huggingface_hub's filter_repo_objects: a file is kept if (no allow patterns, or one matches) and no
/// ignore pattern matches. Positional FILES and --include are allow patterns; a pattern ending in '/' gets
/// '*' appended; '\' is read as '/'. Throws Error{kFileNotFound} for a literal FILE that is not in the listing,
/// and for a selection that keeps no file unless `selection.allow_empty`: a deploy script must not go on with
/// an empty model because a pattern had a typo.
std::vector<RemoteFile> select_files(const std::vector<RemoteFile>& listing, const FileSelection& selection);

}  // namespace hfget::transfer
