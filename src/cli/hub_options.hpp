// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "hfget/environment.hpp"
#include "hfget/hub_connection.hpp"
#include "hfget/repo.hpp"

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

/// How to reach the Hub, built once per command: the flags when given, else the environment as huggingface_hub
/// reads it (endpoint, token, CA bundle and folder, the retry backoff). Error{kUsage} for a --ca-bundle that
/// is not a file. The attempts and the transfer limits are the defaults: each command sets those it has flags
/// for (`--retries` through max_attempts_for_retries, the one check of it).
HubConnection hub_connection(const HubFlags& flags, const HubEnvironment& env);

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
