// SPDX-License-Identifier: MIT
#include "hub/hub_errors.hpp"

#include <gtest/gtest.h>

#include <string>

namespace hfget::hub {
namespace {

http::HttpResponse response(long status, const std::string& error_code = "", const std::string& error_message = "") {
  http::HttpResponse answer;
  answer.status = status;
  if (!error_code.empty()) answer.headers["x-error-code"] = error_code;
  if (!error_message.empty()) answer.headers["x-error-message"] = error_message;
  return answer;
}

class ErrorFromResponse : public ::testing::Test {
 protected:
  Error error_for(const http::HttpResponse& answer) { return error_from_response(answer, context_); }

  RepoId repo_ = RepoId::parse("org/model", RepoType::kModel);
  RequestContext context_{&repo_, "main", "weights/model.safetensors"};
};

TEST_F(ErrorFromResponse, MapsGatedRepoToAccessDenied) {
  EXPECT_EQ(error_for(response(401, "GatedRepo")).code(), ErrorCode::kAccessDenied);
  EXPECT_EQ(error_for(response(403, "GatedRepo", "Access to model org/model is restricted.")).code(),
            ErrorCode::kAccessDenied);
}

TEST_F(ErrorFromResponse, GatedRepoNamesThePageWhereTheLicenceIsAccepted) {
  context_.page_url = "https://huggingface.co/org/model";
  const std::string what = error_for(response(401, "GatedRepo")).what();
  EXPECT_NE(what.find("accept its licence at https://huggingface.co/org/model"), std::string::npos) << what;
  EXPECT_NE(what.find("HF_TOKEN"), std::string::npos) << what;
}

TEST_F(ErrorFromResponse, MapsRevisionNotFound) {
  const Error error = error_for(response(404, "RevisionNotFound", "Invalid rev id: nope"));
  EXPECT_EQ(error.code(), ErrorCode::kRevisionNotFound);
  EXPECT_NE(std::string(error.what()).find("'main'"), std::string::npos) << error.what();
}

TEST_F(ErrorFromResponse, MapsEntryNotFoundToFileNotFoundNamingTheFile) {
  const Error error = error_for(response(404, "EntryNotFound"));
  EXPECT_EQ(error.code(), ErrorCode::kFileNotFound);
  EXPECT_EQ(error.file(), std::filesystem::path("weights/model.safetensors"));
  EXPECT_NE(std::string(error.what()).find("weights/model.safetensors"), std::string::npos) << error.what();
}

// The revision and tree endpoints have no file path: exit 6 ("a file you named") and "file '' not found"
// would blame a file nobody named.
TEST_F(ErrorFromResponse, MapsEntryNotFoundFromTheApiToTheRevisionError) {
  const RequestContext api_request{&repo_, "main", {}};
  const Error error = error_from_response(response(404, "EntryNotFound", "no such entry"), api_request);
  EXPECT_EQ(error.code(), ErrorCode::kRevisionNotFound);
  const std::string what = error.what();
  EXPECT_EQ(what.find("file ''"), std::string::npos) << what;
  EXPECT_NE(what.find("revision 'main'"), std::string::npos) << what;
  EXPECT_NE(what.find("model 'org/model'"), std::string::npos) << what;
  EXPECT_NE(what.find("EntryNotFound"), std::string::npos) << what;
  EXPECT_TRUE(error.file().empty());
}

TEST_F(ErrorFromResponse, MapsRepoNotFound) {
  const Error error = error_for(response(404, "RepoNotFound"));
  EXPECT_EQ(error.code(), ErrorCode::kRepoNotFound);
  EXPECT_NE(std::string(error.what()).find("model 'org/model'"), std::string::npos) << error.what();
  EXPECT_EQ(error_for(response(401, "RepoNotFound")).code(), ErrorCode::kRepoNotFound);
}

TEST_F(ErrorFromResponse, MapsARejectedTokenToAccessDenied) {
  EXPECT_EQ(error_for(response(401, "", "Invalid credentials in Authorization header")).code(),
            ErrorCode::kAccessDenied);
  EXPECT_EQ(error_for(response(401, "RepoNotFound", "Invalid credentials in Authorization header")).code(),
            ErrorCode::kAccessDenied);
}

TEST_F(ErrorFromResponse, MapsBare401And404ToRepoNotFound) {
  EXPECT_EQ(error_for(response(401)).code(), ErrorCode::kRepoNotFound);
  EXPECT_EQ(error_for(response(404)).code(), ErrorCode::kRepoNotFound);
  EXPECT_EQ(error_for(response(401, "", "Some other message")).code(), ErrorCode::kRepoNotFound);
}

TEST_F(ErrorFromResponse, MapsBare403ToAccessDenied) {
  EXPECT_EQ(error_for(response(403)).code(), ErrorCode::kAccessDenied);
  EXPECT_EQ(error_for(response(403, "", "Access to this resource is disabled.")).code(), ErrorCode::kAccessDenied);
}

TEST_F(ErrorFromResponse, MapsOtherStatusesToNetwork) {
  for (const long status : {400L, 416L, 429L, 500L, 502L, 503L}) {
    const Error error = error_for(response(status));
    EXPECT_EQ(error.code(), ErrorCode::kNetwork) << status;
    EXPECT_NE(std::string(error.what()).find(std::to_string(status)), std::string::npos) << error.what();
  }
}

TEST_F(ErrorFromResponse, ErrorCodeHeaderWinsOverStatus) {
  EXPECT_EQ(error_for(response(500, "EntryNotFound")).code(), ErrorCode::kFileNotFound);
  EXPECT_EQ(error_for(response(403, "RevisionNotFound")).code(), ErrorCode::kRevisionNotFound);
}

TEST_F(ErrorFromResponse, QuotesTheServerMessageSanitisedAndShortened) {
  const Error error = error_for(response(403, "", "bad\x1b[31m\nthing" + std::string(500, 'x')));
  const std::string what = error.what();
  EXPECT_NE(what.find("bad\\x1b[31m\\x0athing"), std::string::npos) << what;
  EXPECT_EQ(what.find('\x1b'), std::string::npos);
  EXPECT_EQ(what.find('\n'), std::string::npos);
  EXPECT_EQ(what.find(std::string(201, 'x')), std::string::npos);
}

TEST(ErrorFromResponseWithoutRepo, SaysRepository) {
  const Error error = error_from_response(response(404), RequestContext{});
  EXPECT_EQ(error.code(), ErrorCode::kRepoNotFound);
  EXPECT_NE(std::string(error.what()).find("repository"), std::string::npos) << error.what();
}

TEST(LooksLikeHubError, TrustsTheHubsHeadersAndJsonBodies) {
  EXPECT_TRUE(looks_like_hub_error(response(404, "RepoNotFound")));
  EXPECT_TRUE(looks_like_hub_error(response(401, "", "Invalid credentials in Authorization header")));
  http::HttpResponse json_body = response(404);
  json_body.error_body = R"({"error": "Repository not found"})";
  EXPECT_TRUE(looks_like_hub_error(json_body));
  EXPECT_TRUE(looks_like_hub_error(response(404)));  // no body to judge: given the benefit of the doubt
}

TEST(LooksLikeHubError, RefusesAnHtmlOrTextPageWithoutTheHubsHeaders) {
  http::HttpResponse html = response(404);
  html.error_body = "\n<!DOCTYPE HTML>\n<html><body><h1>Error response</h1></body></html>\n";
  EXPECT_FALSE(looks_like_hub_error(html));
  http::HttpResponse text = response(404);
  text.error_body = "404 page not found";
  EXPECT_FALSE(looks_like_hub_error(text));
  // The Hub's own headers win over the body's shape.
  html.headers["x-error-code"] = "RepoNotFound";
  EXPECT_TRUE(looks_like_hub_error(html));
}

TEST(LooksLikeHtml, SeesAPageBehindLeadingBlanks) {
  EXPECT_TRUE(looks_like_html("<html>"));
  EXPECT_TRUE(looks_like_html(" \r\n\t<!doctype html>"));
  EXPECT_FALSE(looks_like_html(R"({"sha": "x"})"));
  EXPECT_FALSE(looks_like_html(""));
}

}  // namespace
}  // namespace hfget::hub
