// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>
#include <string>

#include "hfget/environment.hpp"
#include "hfget/repo.hpp"
#include "hfget/secret.hpp"

namespace hfget::cli {

/// The flags of every command that talks to the Hub, spelled as `hf` spells them.
struct HubFlags {
  std::string repo_type = "model";
  std::string endpoint;
  std::string token;
  std::string ca_bundle;
};

/// `--repo-type model|dataset|space` (default model).
void add_repo_type_option(CLI::App* command, std::string& repo_type);

/// `--repo-type`, `--token`, `--endpoint`, `--ca-bundle`.
void add_hub_options(CLI::App* command, HubFlags& flags);

/// The repo type a (checked) --repo-type names; Error{kUsage} otherwise.
RepoType repo_type_from(const std::string& text);

/// Where and how to reach the Hub: the flags when given, else the environment as huggingface_hub reads it.
struct HubAccess {
  std::string endpoint;         // no trailing '/'
  std::string endpoint_origin;  // for messages: "--endpoint URL", "HF_ENDPOINT=URL", or empty (the default)
  Secret token;
  std::optional<std::filesystem::path> ca_bundle;
  std::optional<std::filesystem::path> ca_path;
};

/// Error{kUsage} for a --ca-bundle that is not a file.
HubAccess hub_access(const HubFlags& flags, const HubEnvironment& env);

}  // namespace hfget::cli
