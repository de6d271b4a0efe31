// SPDX-License-Identifier: MIT
#include "hub/hub_urls.hpp"

#include "util/percent_encode.hpp"

namespace hfget::hub {
namespace {

std::string api_base(const std::string& endpoint, const RepoId& repo) {
  return endpoint + "/api/" + std::string(to_string(repo.type)) + "s/" + repo.name;
}

std::string resolve_prefix(RepoType type) {
  switch (type) {
    case RepoType::kModel: return "";
    case RepoType::kDataset: return "datasets/";
    case RepoType::kSpace: return "spaces/";
  }
  return "";
}

}  // namespace

std::string revision_info_url(const std::string& endpoint, const RepoId& repo, const std::string& revision) {
  return api_base(endpoint, repo) + "/revision/" + util::percent_encode(revision, "");
}

std::string tree_url(const std::string& endpoint, const RepoId& repo, const std::string& commit) {
  return api_base(endpoint, repo) + "/tree/" + util::percent_encode(commit, "") + "?recursive=true&expand=false";
}

std::string repo_page_url(const std::string& endpoint, const RepoId& repo) {
  return endpoint + "/" + resolve_prefix(repo.type) + repo.name;
}

std::string resolve_url(const std::string& endpoint, const RepoId& repo, const std::string& commit,
                        const std::string& path) {
  return endpoint + "/" + resolve_prefix(repo.type) + repo.name + "/resolve/" + util::percent_encode(commit, "") + "/" +
         util::percent_encode(path, "/");
}

}  // namespace hfget::hub
