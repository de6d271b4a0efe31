// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <stop_token>
#include <string>
#include <string_view>

#include "hfget/repo.hpp"
#include "hfget/secret.hpp"
#include "http/easy_request.hpp"

namespace hfget::hub {

struct HubClientSettings {
  std::string endpoint;  // no trailing '/'
  Secret token;
  http::TransportSettings transport;
  int max_attempts = 8;
  std::chrono::milliseconds retry_base_delay{1000};
  std::chrono::seconds retry_max_time{600};  // per request, waits included (--retry-max-time); 0: no limit
};

/// The Hub's metadata API: revision → commit, and the recursive tree listing at a commit. The token goes
/// only to the endpoint's host.
class HubClient {
 public:
  HubClient(HubClientSettings settings, std::stop_token stop);

  /// The commit a branch, tag or (short) commit id points to. A 40-hex commit is returned without a request.
  std::string resolve_commit(const RepoId& repo, const std::string& revision);

  /// Every file of the repo at `commit` (recursive, all pages), in the order the Hub lists them.
  std::vector<RemoteFile> list_files(const RepoId& repo, const std::string& commit);

  const HubClientSettings& settings() const noexcept { return settings_; }

 private:
  struct JsonAnswer {
    http::HttpResponse response;
    std::string body;
    std::string final_url;  // after redirects: relative links resolve against it
  };
  JsonAnswer get_following_redirects(const std::string& url);
  /// `what` names the answer in messages ("repo info", "tree listing").
  JsonAnswer get_json(const std::string& url, const std::string& revision, const RepoId& repo, std::string_view what);

  HubClientSettings settings_;
  std::stop_token stop_;
  http::EasyRequest request_;
};

/// True for a full commit id (40 lowercase hex): such a revision needs no lookup.
bool is_commit_id(const std::string& revision);

}  // namespace hfget::hub
