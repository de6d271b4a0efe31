// SPDX-License-Identifier: MIT
#include "cli/hub_options.hpp"

#include "hfget/error.hpp"

namespace hfget::cli {

void add_repo_type_option(CLI::App* command, std::string& repo_type) {
  command->add_option("--repo-type", repo_type, "model, dataset or space")
      ->check(CLI::IsMember({"model", "dataset", "space"}))
      ->capture_default_str();
}

void add_hub_options(CLI::App* command, HubFlags& flags) {
  add_repo_type_option(command, flags.repo_type);
  command->add_option("--token", flags.token, "Hub token (default: HF_TOKEN or the token file)");
  command->add_option("--endpoint", flags.endpoint, "Hub URL (default: HF_ENDPOINT or https://huggingface.co)");
  command->add_option("--ca-bundle", flags.ca_bundle,
                      "CA certificates (PEM) to trust (default: CURL_CA_BUNDLE, SSL_CERT_FILE, the system's)");
}

RepoType repo_type_from(const std::string& text) {
  const std::optional<RepoType> type = parse_repo_type(text);
  if (!type) throw Error(ErrorCode::kUsage, "--repo-type must be model, dataset or space");
  return *type;
}

HubAccess hub_access(const HubFlags& flags, const HubEnvironment& env) {
  HubAccess access;
  access.endpoint = flags.endpoint.empty() ? env.endpoint : flags.endpoint;
  access.endpoint_origin = flags.endpoint.empty() ? env.endpoint_origin : "--endpoint " + flags.endpoint;
  while (!access.endpoint.empty() && access.endpoint.back() == '/') access.endpoint.pop_back();
  access.token = flags.token.empty() ? env.token : Secret(clean_token(flags.token));
  if (!flags.ca_bundle.empty() && !std::filesystem::is_regular_file(flags.ca_bundle)) {
    throw Error(ErrorCode::kUsage, "--ca-bundle: no such file: " + flags.ca_bundle);
  }
  access.ca_bundle = flags.ca_bundle.empty()
                         ? env.ca_bundle
                         : std::optional<std::filesystem::path>(std::filesystem::absolute(flags.ca_bundle));
  access.ca_path = env.ca_path;
  return access;
}

}  // namespace hfget::cli
