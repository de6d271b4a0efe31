// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hfget/environment.hpp"
#include "hfget/repo.hpp"
#include "hfget/secret.hpp"

namespace hfget::cli {

/// The flags of every command that talks to the Hub, spelled as `hf` spells them.
struct HubFlags {
  std::string repo_type = "model";
  bool repo_type_given = false;  // --repo-type was on the command line (else a "datasets/..." id may name it)
  std::string endpoint;
  std::string token;
  std::string ca_bundle;
};

/// `--repo-type model|dataset|space` (default model); sets `given` when it is on the command line.
void add_repo_type_option(CLI::App* command, std::string& repo_type, bool* given = nullptr);

/// `--revision` (default main); sets `given` when it is on the command line.
void add_revision_option(CLI::App* command, std::string& revision, bool& given);

/// `--repo-type`, `--token`, `--endpoint`, `--ca-bundle`.
void add_hub_options(CLI::App* command, HubFlags& flags);

/// `--include PATTERN` and `--exclude PATTERN`, one pattern per occurrence (repeat the flag for more), as
/// `hf download` takes them: a flag that took every following word would swallow the repo id and FILES.
void add_selection_options(CLI::App* command, std::vector<std::string>& include, std::vector<std::string>& exclude);

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

struct NamedRepo {
  RepoId repo;
  std::string revision;
};

/// The repo and revision a command names: its repo argument in any spelling parse_repo_reference reads
/// ("datasets/org/x", "hf://org/x@rev", a Hub page URL), with --repo-type and --revision when given.
/// Error{kUsage} when the text and a flag disagree; a warning when a URL names another host than `endpoint`
/// (the token goes only to the endpoint the user configured, never to a host taken from a pasted URL).
NamedRepo named_repo(const std::string& text, const HubFlags& flags, const std::string& revision, bool revision_given,
                     const std::string& endpoint);

}  // namespace hfget::cli
