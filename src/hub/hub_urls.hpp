// SPDX-License-Identifier: MIT
// The Hub's URL shapes (HUB-PROTOCOL §1.1–1.3). Repo ids are not encoded (they are validated instead);
// revisions are encoded entirely ("refs/pr/1" → "refs%2Fpr%2F1"); file paths keep their '/'.
#pragma once

#include <string>

#include "hfget/repo.hpp"

namespace hfget::hub {

std::string revision_info_url(const std::string& endpoint, const RepoId& repo, const std::string& revision);
std::string tree_url(const std::string& endpoint, const RepoId& repo, const std::string& commit);
/// The repo's page for people (https://huggingface.co/org/name, …/datasets/org/name): where a gated repo's
/// licence is accepted.
std::string repo_page_url(const std::string& endpoint, const RepoId& repo);
std::string resolve_url(const std::string& endpoint, const RepoId& repo, const std::string& commit,
                        const std::string& path);

}  // namespace hfget::hub
