// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/run_context.hpp"
#include "cli/version.hpp"
#include "hfget/environment.hpp"

namespace hfget::cli {

/// A setting and where it came from: "HF_HUB_CACHE", "default", "HF_HOME/token", ...
struct SourcedValue {
  std::string value;
  std::string origin;
};

/// Everything `hfget env` prints: what a bug report needs, and never a token.
struct EnvReport {
  VersionInfo version;
  SourcedValue endpoint;
  SourcedValue hf_home;
  SourcedValue hub_cache;
  bool token_set = false;
  std::string token_origin;  // "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "token file <path>", or "none"
  std::vector<std::pair<std::string, std::string>> proxies;   // the proxy variables set, passwords masked
  std::vector<std::pair<std::string, std::string>> settings;  // other variables hfget reads that are set
  std::filesystem::path target;
  std::optional<std::uintmax_t> free_bytes;  // nullopt when neither the target nor a parent can be read
};

/// Reads the process environment the way the download does (HubEnvironment) and says where each value came
/// from. `target_dir` is the directory a download would write (--local-dir / --cache-dir), empty for the cache.
EnvReport collect_env_report(const HubEnvironment& env, const std::filesystem::path& target_dir);

std::string env_report_text(const EnvReport& report);
nlohmann::json env_report_json(const EnvReport& report);

/// "http://user:***@proxy:3128": a proxy URL with its password hidden.
std::string masked_proxy(const std::string& url);

/// `hfget env [--json] [--local-dir DIR | --cache-dir DIR]`.
std::function<int(const RunContext&)> add_env_command(CLI::App& command);

}  // namespace hfget::cli
