// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>

#include "hfget/error.hpp"
#include "hfget/repo.hpp"
#include "http/easy_request.hpp"

namespace hfget::hub {

/// What was being asked for, so the error can say it in the user's terms.
struct RequestContext {
  const RepoId* repo = nullptr;
  std::string revision;       // empty if not relevant
  std::string path;           // the repo file, if any
  std::string page_url = {};  // the repo's page on the Hub, where a gated repo's licence is accepted; may be empty
};

/// Turns a Hub error answer into an Error with one clear line, following the Hub's X-Error-Code header
/// (HUB-PROTOCOL §2): RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo; bare 401/403 otherwise.
Error error_from_response(const http::HttpResponse& response, const RequestContext& context);

/// Whether an error answer could be the Hub's: it carries X-Error-Code or X-Error-Message, or a JSON (or
/// empty) body. A web server that is not a Hub answers a 404 with an HTML page and none of them; reporting
/// that as "repo not found, set HF_TOKEN" sends the user after the wrong problem.
bool looks_like_hub_error(const http::HttpResponse& response);

/// Whether a body is an HTML page (first non-blank character '<') rather than the JSON every Hub API answers.
bool looks_like_html(std::string_view body);

}  // namespace hfget::hub
