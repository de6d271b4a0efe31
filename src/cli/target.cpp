// SPDX-License-Identifier: MIT
#include "cli/target.hpp"

#include "hfget/error.hpp"
#include "util/env.hpp"

namespace hfget::cli {

Target resolve_target(const std::string& text, const std::string& repo_type, const std::string& cache_dir_flag,
                      const HubEnvironment& env) {
  const std::optional<RepoType> type = parse_repo_type(repo_type);
  if (!type) throw Error(ErrorCode::kUsage, "--repo-type must be model, dataset or space");
  std::filesystem::path cache_dir = cache_dir_from(cache_dir_flag, env);
  if (text.empty()) throw Error(ErrorCode::kUsage, "the target is empty");
  std::error_code error;
  const bool is_directory = std::filesystem::is_directory(text, error);
  // "org/name" may also exist as a relative directory; only a download's metadata or an explicit path
  // ("./x", "/x") makes it a local dir.
  const bool looks_like_path = text.front() == '.' || text.front() == '/' ||
                               std::filesystem::exists(std::filesystem::path(text) / ".cache" / "huggingface", error);
  const bool explicit_path = text.front() == '.' || text.front() == '/';
  if ((is_directory && looks_like_path) || explicit_path)
    return Target::in_local_dir(std::filesystem::absolute(text), *type);
  return Target::in_cache(std::move(cache_dir), RepoId::parse(text, *type));
}

std::filesystem::path cache_dir_from(const std::string& cache_dir_flag, const HubEnvironment& env) {
  return std::filesystem::absolute(cache_dir_flag.empty() ? env.hub_cache : util::expand_user_and_vars(cache_dir_flag));
}

std::filesystem::path state_dir_of(const Target& target) {
  return target.state_dir();
}

}  // namespace hfget::cli
