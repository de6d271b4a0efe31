// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include "hfget/hub_connection.hpp"
#include "hfget/repo.hpp"
#include "hfget/secret.hpp"
#include "http/easy_request.hpp"
#include "hub/hub_errors.hpp"
#include "hub/tree_listing.hpp"
#include "hub/xet_token.hpp"

namespace hfget::hub {

/// The libcurl settings of every request made with `connection` (Hub API and CDN alike).
http::TransportSettings transport_settings(const HubConnection& connection);

/// The Hub's metadata API: revision → commit, and the recursive tree listing at a commit. The token goes
/// only to the endpoint's host.
class HubClient {
 public:
  /// Sends through a libcurl handle of its own, made from the connection's transport settings.
  HubClient(HubConnection connection, std::stop_token stop);
  /// Sends through `transport` (which must outlive the client): unit tests pass a scripted one.
  HubClient(HubConnection connection, http::Transport& transport, std::stop_token stop);

  /// The commit a branch, tag or (short) commit id points to. A 40-hex commit is returned without a request.
  std::string resolve_commit(const RepoId& repo, const std::string& revision);

  /// The revision endpoint's answer, asked for a full commit id too: it proves that the repo and the
  /// revision exist and that the token may see them, and says whether the repo is gated.
  RevisionInfo revision_info(const RepoId& repo, const std::string& revision);

  /// Whether the token may read the repo's file contents, asked once with the first byte of `path` (a
  /// redirect to the CDN is an answer: it is not followed). A gated repo lists its files to anyone but
  /// refuses their contents; asked before the files, that is one line instead of one per file. Throws
  /// Error{kAccessDenied} naming the repo's page.
  void check_file_access(const RepoId& repo, const std::string& commit, const std::string& path);

  /// Every file of the repo at `commit` (recursive, all pages), in the order the Hub lists them.
  std::vector<RemoteFile> list_files(const RepoId& repo, const std::string& commit);

  /// The Xet read token for `repo` at `commit`, asked with the Hub token (hub/xet_token.hpp).
  XetAccess xet_read_access(const RepoId& repo, const std::string& commit);

 private:
  struct JsonAnswer {
    http::HttpResponse response;
    std::string body;
    std::string final_url;  // after redirects: relative links resolve against it
  };
  JsonAnswer get_following_redirects(const std::string& url);
  /// `what` names the answer in messages ("repo info", "tree listing").
  JsonAnswer get_json(const std::string& url, const std::string& revision, const RepoId& repo, std::string_view what);
  /// Sends until `send` gives an answer `usable` accepts, retrying what is transient; throws the error of
  /// the last answer otherwise.
  JsonAnswer with_retries(const std::function<JsonAnswer()>& send, const std::function<bool(JsonAnswer&)>& usable,
                          const RequestContext& context);
  /// One line for a server that is not a Hub, or a transport failure, naming where the endpoint came from.
  std::string endpoint_note() const;

  HubConnection settings_;
  std::stop_token stop_;
  std::unique_ptr<http::Transport> owned_transport_;  // with the first constructor only
  http::Transport& transport_;
  bool answered_ = false;  // some request of this client got an HTTP answer: later connect errors are retried
};

}  // namespace hfget::hub
