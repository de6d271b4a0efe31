// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "hfget/repo.hpp"

namespace hfget::hub {

/// A repo as a user may name it where a repo id is expected: the id itself, or the spellings `hf`, the
/// Hub's pages and HfFileSystem use, so that a deploy script written for `hf download` (or a URL pasted from
/// a browser) works unchanged.
struct RepoReference {
  RepoId repo;
  std::optional<std::string> revision;  // from "@rev" or ".../tree/rev"
  std::optional<std::string> origin;    // "https://huggingface.co" when the text was a URL
};

/// Parses "org/name", "name", "org/name@rev", "datasets/org/name" (also "spaces/", "models/"; "datasets/squad"
/// is the canonical dataset "squad", as huggingface_hub reads it), "hf://[datasets/]org/name[@rev]" and
/// "https://host/[datasets/]org/name[/tree/rev]". `type_flag` is --repo-type when it was given: a type the
/// text names must agree with it. Throws Error{kUsage} naming the problem, e.g. a path inside the repo.
RepoReference parse_repo_reference(std::string_view text, std::optional<RepoType> type_flag);

}  // namespace hfget::hub
