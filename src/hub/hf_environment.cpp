// SPDX-License-Identifier: MIT
// Mirrors huggingface_hub/constants.py and utils/_auth.py: same variables, same precedence, same cleaning.
#include <algorithm>

#include "hfget/environment.hpp"
#include "hfget/error.hpp"
#include "util/env.hpp"
#include "util/read_text_file.hpp"

namespace hfget {
namespace {

std::filesystem::path default_hf_home() {
  if (std::optional<std::string> home = util::env_value("HF_HOME")) return util::expand_user_and_vars(*home);
  const std::string xdg = util::env_value("XDG_CACHE_HOME").value_or("~/.cache");
  return util::expand_user_and_vars(xdg) / "huggingface";
}

}  // namespace

std::string clean_token(std::string raw) {
  raw.erase(std::remove_if(raw.begin(), raw.end(), [](char c) { return c == '\r' || c == '\n'; }), raw.end());
  const auto not_space = [](unsigned char c) { return c != ' ' && c != '\t' && c != '\f' && c != '\v'; };
  raw.erase(raw.begin(), std::find_if(raw.begin(), raw.end(), not_space));
  raw.erase(std::find_if(raw.rbegin(), raw.rend(), not_space).base(), raw.end());
  return raw;
}

HubEnvironment HubEnvironment::from_process_environment() {
  HubEnvironment env;
  env.hf_home = default_hf_home();
  if (std::optional<std::string> cache = util::env_value("HF_HUB_CACHE")) {
    env.hub_cache = util::expand_user_and_vars(*cache);
  } else if (std::optional<std::string> legacy = util::env_value("HUGGINGFACE_HUB_CACHE")) {
    env.hub_cache = util::expand_user_and_vars(*legacy);
  } else {
    env.hub_cache = env.hf_home / "hub";
  }

  const std::optional<std::string> endpoint_variable = util::env_nonempty("HF_ENDPOINT");
  std::string endpoint = endpoint_variable.value_or("https://huggingface.co");
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  env.endpoint = endpoint;
  // Named in messages about an endpoint that cannot be reached: a variable set long ago in a profile is
  // the last place a user would look.
  if (endpoint_variable) env.endpoint_origin = "HF_ENDPOINT=" + *endpoint_variable;

  std::optional<std::string> token = util::env_value("HF_TOKEN");
  if (!token || clean_token(*token).empty()) token = util::env_value("HUGGING_FACE_HUB_TOKEN");
  if (!token || clean_token(*token).empty()) {
    const std::filesystem::path token_path = util::env_value("HF_TOKEN_PATH")
                                                 ? util::expand_user_and_vars(*util::env_value("HF_TOKEN_PATH"))
                                                 : env.hf_home / "token";
    token = util::read_text_file(token_path, 1 << 20);
  }
  if (token) env.token = Secret(clean_token(*token));

  env.offline = util::env_flag("HF_HUB_OFFLINE") || util::env_flag("TRANSFORMERS_OFFLINE");
  env.progress_bars_disabled = util::env_flag("HF_HUB_DISABLE_PROGRESS_BARS");
  env.symlinks_disabled = util::env_flag("HF_HUB_DISABLE_SYMLINKS");
  env.xet_disabled = util::env_flag("HF_HUB_DISABLE_XET");
  if (std::optional<std::string> bundle = util::env_nonempty("CURL_CA_BUNDLE")) {
    env.ca_bundle = *bundle;
  } else if (std::optional<std::string> cert_file = util::env_nonempty("SSL_CERT_FILE")) {
    env.ca_bundle = *cert_file;
  }
  if (std::optional<std::string> cert_dir = util::env_nonempty("SSL_CERT_DIR")) env.ca_path = *cert_dir;
  if (std::optional<std::string> base = util::env_nonempty("HFGET_RETRY_BASE_MS")) {
    try {
      env.retry_base_delay = std::chrono::milliseconds(std::stoll(*base));
    } catch (const std::exception&) {
      throw Error(ErrorCode::kUsage, "HFGET_RETRY_BASE_MS must be a number of milliseconds");
    }
  }
  return env;
}

}  // namespace hfget
