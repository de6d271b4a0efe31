// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include "hfget/error.hpp"
#include "hfget/repo.hpp"
#include "http/easy_request.hpp"

namespace hfget::hub {

/// What was being asked for, so the error can say it in the user's terms.
struct RequestContext {
  const RepoId* repo = nullptr;
  std::string revision;  // empty if not relevant
  std::string path;      // the repo file, if any
};

/// Turns a Hub error answer into an Error with one clear line, following the Hub's X-Error-Code header
/// (HUB-PROTOCOL §2): RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo; bare 401/403 otherwise.
Error error_from_response(const http::HttpResponse& response, const RequestContext& context);

}  // namespace hfget::hub
