// SPDX-License-Identifier: MIT
#include "cli/hub_options.hpp"

#include <spdlog/spdlog.h>

#include "hfget/error.hpp"

namespace hfget::cli {

void add_repo_type_option(CLI::App* command, std::string& repo_type, bool* given) {
  CLI::Option* option = command->add_option("--repo-type", repo_type, "model, dataset or space")
                            ->check(CLI::IsMember({"model", "dataset", "space"}))
                            ->capture_default_str();
  if (given != nullptr) option->each([given](const std::string&) { *given = true; });
}

void add_revision_option(CLI::App* command, std::string& revision, bool& given) {
  command->add_option("--revision", revision, "Branch, tag or commit")
      ->capture_default_str()
      ->each([&given](const std::string&) { given = true; });
}

void add_hub_options(CLI::App* command, HubFlags& flags) {
  add_repo_type_option(command, flags.repo_type, &flags.repo_type_given);
  command->add_option("--token", flags.token, "Hub token (default: HF_TOKEN or the token file)");
  command->add_option("--endpoint", flags.endpoint, "Hub URL (default: HF_ENDPOINT or https://huggingface.co)");
  command->add_option("--ca-bundle", flags.ca_bundle,
                      "CA certificates (PEM) to trust (default: CURL_CA_BUNDLE, SSL_CERT_FILE, the system's)");
}

void add_selection_options(CLI::App* command, std::vector<std::string>& include, std::vector<std::string>& exclude) {
  command->add_option("--include", include, "Only files matching this pattern (repeat the flag for more)")
      ->allow_extra_args(false);
  command->add_option("--exclude", exclude, "Skip files matching this pattern (repeat the flag for more)")
      ->allow_extra_args(false);
}

RepoType repo_type_from(const std::string& text) {
  const std::optional<RepoType> type = parse_repo_type(text);
  if (!type) throw Error(ErrorCode::kUsage, "--repo-type must be model, dataset or space");
  return *type;
}

HubConnection hub_connection(const HubFlags& flags, const HubEnvironment& env) {
  HubConnection hub;
  hub.endpoint = flags.endpoint.empty() ? env.endpoint : flags.endpoint;
  hub.endpoint_origin = flags.endpoint.empty() ? env.endpoint_origin : "--endpoint " + flags.endpoint;
  while (!hub.endpoint.empty() && hub.endpoint.back() == '/') hub.endpoint.pop_back();
  hub.token = flags.token.empty() ? env.token : Secret(clean_token(flags.token));
  if (!flags.ca_bundle.empty() && !std::filesystem::is_regular_file(flags.ca_bundle)) {
    throw Error(ErrorCode::kUsage, "--ca-bundle: no such file: " + flags.ca_bundle);
  }
  hub.ca_bundle = flags.ca_bundle.empty()
                      ? env.ca_bundle
                      : std::optional<std::filesystem::path>(std::filesystem::absolute(flags.ca_bundle));
  hub.ca_path = env.ca_path;
  hub.retry_base_delay = env.retry_base_delay;
  return hub;
}

NamedRepo named_repo(const std::string& text, const HubFlags& flags, const std::string& revision, bool revision_given,
                     const std::string& endpoint) {
  const std::optional<RepoType> type_flag =
      flags.repo_type_given ? std::optional<RepoType>(repo_type_from(flags.repo_type)) : std::nullopt;
  RepoReference reference = parse_repo_reference(text, type_flag);
  NamedRepo named{std::move(reference.repo), revision};
  if (reference.revision) {
    if (revision_given && revision != *reference.revision) {
      throw Error(ErrorCode::kUsage, "'" + text + "' names revision '" + *reference.revision + "' but --revision is '" +
                                         revision + "'; give one of them");
    }
    named.revision = *reference.revision;
  }
  if (reference.origin && *reference.origin != endpoint) {
    spdlog::warn("'{}' is a URL on {}, but hfget talks to {} (set --endpoint or HF_ENDPOINT to use another Hub)", text,
                 *reference.origin, endpoint);
  }
  return named;
}

}  // namespace hfget::cli
