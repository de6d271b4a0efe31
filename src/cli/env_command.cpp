// SPDX-License-Identifier: MIT
// `hfget env`, as `hf env`: what a bug report needs in one paste. Each value says where it came from, since the
// usual surprise is a variable set long ago in a profile. A token is only ever "set, from X": the report is meant
// to be pasted into a public issue.
#include "cli/env_command.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <span>
#include <system_error>

#include "cli/exit_code.hpp"
#include "util/byte_size.hpp"
#include "util/env.hpp"

namespace hfget::cli {
namespace {

constexpr const char* kProxyVariables[] = {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
                                           "all_proxy",  "ALL_PROXY",  "no_proxy",    "NO_PROXY"};
constexpr const char* kOtherSettings[] = {"HF_HUB_OFFLINE",
                                          "TRANSFORMERS_OFFLINE",
                                          "HF_HUB_DISABLE_SYMLINKS",
                                          "HF_HUB_DISABLE_PROGRESS_BARS",
                                          "CURL_CA_BUNDLE",
                                          "SSL_CERT_FILE",
                                          "SSL_CERT_DIR",
                                          "HF_TOKEN_PATH"};

std::string hf_home_origin() {
  if (util::env_value("HF_HOME")) return "HF_HOME";
  if (util::env_value("XDG_CACHE_HOME")) return "XDG_CACHE_HOME";
  return "default";
}

std::string hub_cache_origin() {
  if (util::env_value("HF_HUB_CACHE")) return "HF_HUB_CACHE";
  if (util::env_value("HUGGINGFACE_HUB_CACHE")) return "HUGGINGFACE_HUB_CACHE";
  return "HF_HOME/hub";
}

bool variable_holds_token(const char* name) {
  const std::optional<std::string> value = util::env_value(name);
  return value && !clean_token(*value).empty();
}

// The precedence of HubEnvironment::from_process_environment, which keeps only the token and not its source.
std::string token_origin(const HubEnvironment& env) {
  if (env.token.empty()) return "none";
  if (variable_holds_token("HF_TOKEN")) return "HF_TOKEN";
  if (variable_holds_token("HUGGING_FACE_HUB_TOKEN")) return "HUGGING_FACE_HUB_TOKEN";
  const std::optional<std::string> path_variable = util::env_value("HF_TOKEN_PATH");
  const std::filesystem::path path = path_variable ? util::expand_user_and_vars(*path_variable) : env.hf_home / "token";
  return "token file " + path.string() + (path_variable ? " (HF_TOKEN_PATH)" : "");
}

// The directory itself, or the nearest parent that exists: a download creates the rest.
std::optional<std::uintmax_t> free_space_at(std::filesystem::path dir) {
  for (int depth = 0; depth < 64 && !dir.empty(); ++depth) {
    std::error_code error;
    const std::filesystem::space_info space = std::filesystem::space(dir, error);
    if (!error) return space.available;
    if (dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return std::nullopt;
}

void add_set_variables(std::span<const char* const> names, bool mask,
                       std::vector<std::pair<std::string, std::string>>& out) {
  for (const char* name : names) {
    if (const std::optional<std::string> value = util::env_value(name)) {
      out.emplace_back(name, mask ? masked_proxy(*value) : *value);
    }
  }
}

std::string line(const std::string& label, const std::string& value) {
  std::string padded = label + ":";
  padded.resize(std::max<std::size_t>(padded.size() + 1, 16), ' ');
  return padded + value + "\n";
}

nlohmann::json sourced(const SourcedValue& value) {
  return {{"value", value.value}, {"from", value.origin}};
}

}  // namespace

std::string masked_proxy(const std::string& url) {
  const std::size_t scheme_end = url.find("://");
  const std::size_t user_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const std::size_t at = url.find('@', user_start);
  if (at == std::string::npos) return url;
  const std::size_t colon = url.find(':', user_start);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

EnvReport collect_env_report(const HubEnvironment& env, const std::filesystem::path& target_dir) {
  EnvReport report;
  report.version = version_info();
  report.endpoint = {env.endpoint, env.endpoint_origin.empty() ? "default" : "HF_ENDPOINT"};
  report.hf_home = {env.hf_home.string(), hf_home_origin()};
  report.hub_cache = {env.hub_cache.string(), hub_cache_origin()};
  report.token_set = !env.token.empty();
  report.token_origin = token_origin(env);
  add_set_variables(kProxyVariables, true, report.proxies);
  add_set_variables(kOtherSettings, false, report.settings);
  report.target = target_dir.empty() ? env.hub_cache : target_dir;
  report.free_bytes = free_space_at(report.target);
  return report;
}

std::string env_report_text(const EnvReport& report) {
  const VersionInfo& v = report.version;
  std::string out = line("hfget", v.version + " (commit " + v.commit + ")");
  out += line("libcurl", v.libcurl + " (" + v.curl_ssl + ")") + line("OpenSSL", v.openssl) + line("glibc", v.glibc);
  out += line("endpoint", report.endpoint.value + " (from " + report.endpoint.origin + ")");
  out += line("HF_HOME", report.hf_home.value + " (from " + report.hf_home.origin + ")");
  out += line("hub cache", report.hub_cache.value + " (from " + report.hub_cache.origin + ")");
  out += line("token", report.token_set ? "set, from " + report.token_origin : "not set");
  if (report.proxies.empty()) out += line("proxy", "none set");
  for (const auto& [name, value] : report.proxies) out += line(name, value);
  for (const auto& [name, value] : report.settings) out += line(name, value);
  out += line("target", report.target.string());
  out += line("free space", report.free_bytes ? util::format_bytes_both(*report.free_bytes) : "unknown");
  return out;
}

nlohmann::json env_report_json(const EnvReport& report) {
  const VersionInfo& v = report.version;
  nlohmann::json proxies = nlohmann::json::object();
  for (const auto& [name, value] : report.proxies) proxies[name] = value;
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& [name, value] : report.settings) settings[name] = value;
  return {{"version", v.version},
          {"commit", v.commit},
          {"libcurl", v.libcurl},
          {"curl_ssl", v.curl_ssl},
          {"openssl", v.openssl},
          {"glibc", v.glibc},
          {"endpoint", sourced(report.endpoint)},
          {"hf_home", sourced(report.hf_home)},
          {"hub_cache", sourced(report.hub_cache)},
          {"token", {{"set", report.token_set}, {"from", report.token_origin}}},
          {"proxies", proxies},
          {"settings", settings},
          {"target", report.target.string()},
          {"free_bytes", report.free_bytes ? nlohmann::json(*report.free_bytes) : nlohmann::json(nullptr)}};
}

std::function<int(const RunContext&)> add_env_command(CLI::App& command) {
  struct Flags {
    bool json = false;
    std::string local_dir;
    std::string cache_dir;
  };
  auto flags = std::make_shared<Flags>();
  command.add_flag("--json", flags->json, "Print one JSON object");
  CLI::Option* local_dir =
      command.add_option("--local-dir", flags->local_dir, "Report the free space of this download directory");
  command.add_option("--cache-dir", flags->cache_dir, "Report the free space of this HF cache directory")
      ->excludes(local_dir);
  return [&command, flags](const RunContext&) -> int {
    if (!command.parsed()) return -1;
    const HubEnvironment env = HubEnvironment::from_process_environment();
    const std::filesystem::path target = !flags->local_dir.empty() ? flags->local_dir : flags->cache_dir;
    const EnvReport report = collect_env_report(env, target);
    const std::string text = flags->json ? env_report_json(report).dump() + "\n" : env_report_text(report);
    std::fputs(text.c_str(), stdout);
    return kExitSuccess;
  };
}

}  // namespace hfget::cli
