// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

#include "hfget/repo.hpp"

namespace hfget::hub {

/// Parses one page of GET /api/{type}s/{repo}/tree/{commit}?recursive=true: keeps `type == "file"` entries
/// and checks every field it uses (hashes are hex of the right length, sizes are non-negative integers).
/// Throws Error{kNetwork} naming the entry when the server sent something malformed.
std::vector<RemoteFile> parse_tree_page(const std::string& json_text);

/// What the revision endpoint says that a download needs.
struct RevisionInfo {
  std::string commit;  // `sha`, checked to be 40 lowercase hex
  bool gated = false;  // `gated` is "auto" or "manual" (or true): file contents need an accepted licence
};
RevisionInfo parse_revision_info(const std::string& json_text);

/// The revision endpoint's commit (`sha`), checked to be 40 lowercase hex.
std::string parse_commit_from_revision_info(const std::string& json_text);

}  // namespace hfget::hub
