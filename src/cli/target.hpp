// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <string>

#include "hfget/environment.hpp"
#include "hfget/repo.hpp"
#include "hfget/target.hpp"

namespace hfget::cli {

/// What `verify`, `status` and `wait` point at (TARGET): a directory is a local-dir download; anything else is
/// read as a repo id in the cache (`--cache-dir`, else the environment's). Throws Error{kUsage} for an
/// invalid repo id.
Target resolve_target(const std::string& text, const std::string& repo_type, const std::string& cache_dir_flag,
                      const HubEnvironment& env);

/// hfget's state folder of `target` (Target::state_dir).
std::filesystem::path state_dir_of(const Target& target);

/// The HF cache a command uses: `--cache-dir` (with ~ and $VARS expanded), else the environment's; absolute.
std::filesystem::path cache_dir_from(const std::string& cache_dir_flag, const HubEnvironment& env);

}  // namespace hfget::cli
