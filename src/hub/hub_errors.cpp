// SPDX-License-Identifier: MIT
#include "hub/hub_errors.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "util/printable.hpp"
#include "util/secrets.hpp"

namespace hfget::hub {
namespace {

std::string repo_label(const RequestContext& context) {
  if (context.repo == nullptr) return "repository";
  return fmt::format("{} '{}'", to_string(context.repo->type), context.repo->name);
}

// Server-supplied text is untrusted: keep it short and printable. Redacted before it is cut, so that a cut
// cannot leave the start of an echoed token behind (the Error type redacts the whole message again).
std::string sanitize(const std::string& text) {
  return util::printable(util::redact_secrets(text), 200);
}

}  // namespace

Error error_from_response(const http::HttpResponse& response, const RequestContext& context) {
  const std::string code = response.header("x-error-code") ? *response.header("x-error-code") : "";
  const std::string message = response.header("x-error-message") ? sanitize(*response.header("x-error-message")) : "";
  const std::string label = repo_label(context);
  const std::string server_says = message.empty() ? "" : fmt::format(" (server: {})", message);

  if (code == "GatedRepo") {
    const std::string where = context.page_url.empty() ? "on the Hub" : "at " + context.page_url;
    return Error(ErrorCode::kAccessDenied,
                 fmt::format("access to {} is restricted: accept its licence {}, then set HF_TOKEN "
                             "(or --token) to a token of the account that accepted it{}",
                             label, where, server_says));
  }
  if (code == "RevisionNotFound") {
    return Error(ErrorCode::kRevisionNotFound,
                 fmt::format("revision '{}' not found in {}{}", context.revision, label, server_says));
  }
  if (code == "EntryNotFound" && context.path.empty()) {
    // From the revision or tree endpoint, not for a file: no file name to blame (exit 6 means "a file you
    // named"); what was asked for there is the revision.
    return Error(ErrorCode::kRevisionNotFound,
                 fmt::format("revision '{}' not found in {}: the Hub answered EntryNotFound (HTTP {}) to its API "
                             "request{}",
                             context.revision, label, response.status, server_says));
  }
  if (code == "EntryNotFound") {
    return Error(ErrorCode::kFileNotFound,
                 fmt::format("file '{}' not found in {} at revision '{}'", context.path, label, context.revision),
                 context.path);
  }
  if (response.status == 401 && message == "Invalid credentials in Authorization header") {
    return Error(ErrorCode::kAccessDenied,
                 fmt::format("the Hub rejected the token for {}: check HF_TOKEN, --token or the token file", label));
  }
  if (code == "RepoNotFound" || response.status == 401 || response.status == 404) {
    return Error(ErrorCode::kRepoNotFound,
                 fmt::format("{} not found; if it is private or gated, set HF_TOKEN (or --token) to a token "
                             "with read access{}",
                             label, server_says));
  }
  if (response.status == 403) {
    return Error(
        ErrorCode::kAccessDenied,
        fmt::format("access to {} denied (HTTP 403): make sure your token has read access{}", label, server_says));
  }
  return Error(ErrorCode::kNetwork,
               fmt::format("the Hub answered HTTP {} for {}{}", response.status, label, server_says));
}

bool looks_like_html(std::string_view body) {
  const std::size_t first = body.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && body[first] == '<';
}

bool looks_like_hub_error(const http::HttpResponse& response) {
  if (response.header("x-error-code") != nullptr || response.header("x-error-message") != nullptr) return true;
  const std::string_view body = response.error_body;
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return true;
  return !looks_like_html(body) && nlohmann::json::accept(body);
}

}  // namespace hfget::hub
