// SPDX-License-Identifier: MIT
// The checks of a Hub connection's limits (one place for download, verify and ls), what libcurl is given
// from it, and download's own option checks built on them.
#include "hfget/hub_connection.hpp"

#include <gtest/gtest.h>

#include "hfget/download.hpp"
#include "hfget/error.hpp"
#include "hub/hub_client.hpp"

namespace hfget {
namespace {

void expect_usage_error(const std::function<void()>& check, const std::string& naming) {
  try {
    check();
    ADD_FAILURE() << "no error; expected one naming " << naming;
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kUsage);
    EXPECT_NE(std::string(error.what()).find(naming), std::string::npos) << error.what();
  }
}

TEST(MaxAttemptsForRetries, IsOneMoreThanTheRetriesFromNoneToAHundred) {
  EXPECT_EQ(max_attempts_for_retries(0), 1);
  EXPECT_EQ(max_attempts_for_retries(8), 9);
  EXPECT_EQ(max_attempts_for_retries(100), 101);
  expect_usage_error([] { max_attempts_for_retries(-1); }, "--retries must be between 0 and 100");
  expect_usage_error([] { max_attempts_for_retries(101); }, "--retries must be between 0 and 100");
}

TEST(CheckHubConnection, AcceptsTheDefaultsAndNamesTheFlagOfALimitNoRunCouldWorkWith) {
  EXPECT_NO_THROW(check_hub_connection(HubConnection{}));
  HubConnection hub;
  hub.max_attempts = 0;
  expect_usage_error([&] { check_hub_connection(hub); }, "--retries");
  hub.max_attempts = 102;
  expect_usage_error([&] { check_hub_connection(hub); }, "--retries");
  hub = HubConnection{};
  hub.stall_timeout = std::chrono::seconds(0);
  expect_usage_error([&] { check_hub_connection(hub); }, "--stall-timeout must be at least 1 second");
  hub = HubConnection{};
  hub.retry_max_time = std::chrono::seconds(-1);
  expect_usage_error([&] { check_hub_connection(hub); }, "--retry-max-time must be 0 or more seconds");
  hub.retry_max_time = std::chrono::seconds(0);  // no limit
  EXPECT_NO_THROW(check_hub_connection(hub));
}

TEST(TransportSettingsOfAConnection, CarryItsLimitsAndCertificates) {
  HubConnection hub;
  hub.stall_timeout = std::chrono::seconds(7);
  hub.speed_limit = 0;
  hub.ca_bundle = "/etc/ssl/private-ca.pem";
  hub.ca_path = "/etc/ssl/certs";
  const http::TransportSettings transport = hub::transport_settings(hub);
  EXPECT_EQ(transport.stall_timeout, std::chrono::seconds(7));
  EXPECT_EQ(transport.speed_limit, 0u);
  EXPECT_EQ(transport.ca_bundle, std::filesystem::path("/etc/ssl/private-ca.pem"));
  EXPECT_EQ(transport.ca_path, std::filesystem::path("/etc/ssl/certs"));
}

DownloadOptions valid_download() {
  DownloadOptions options;
  options.repo = RepoId{RepoType::kModel, "org/model"};
  options.hub.endpoint = "https://huggingface.co";
  return options;
}

TEST(CheckDownloadOptions, AcceptsTheDefaultsAndRefusesEachOptionOutOfRange) {
  EXPECT_NO_THROW(check_download_options(valid_download()));
  const std::vector<std::pair<std::function<void(DownloadOptions&)>, std::string>> cases = {
      {[](DownloadOptions& o) { o.hub.max_attempts = 0; }, "--retries"},
      {[](DownloadOptions& o) { o.chunk_bytes = kMinChunkBytes - 1; }, "--chunk-size must be a size of at least 64KiB"},
      {[](DownloadOptions& o) { o.max_workers = 0; }, "--max-workers must be between 1 and 256"},
      {[](DownloadOptions& o) { o.max_workers = 257; }, "--max-workers"},
      {[](DownloadOptions& o) { o.connections = 0; }, "--connections must be between 1 and 256"},
      {[](DownloadOptions& o) { o.revision.clear(); }, "--revision must not be empty"},
      {[](DownloadOptions& o) { o.revision = "../x"; }, "invalid revision"},
      {[](DownloadOptions& o) { o.hub.endpoint = "ftp://hub"; }, "http:// or https://"},
  };
  for (const auto& [spoil, naming] : cases) {
    DownloadOptions options = valid_download();
    spoil(options);
    expect_usage_error([&] { check_download_options(options); }, naming);
  }
  DownloadOptions offline = valid_download();
  offline.offline = true;
  offline.hub.endpoint.clear();  // offline sends no request: the endpoint is not used
  offline.chunk_bytes = kMinChunkBytes;
  EXPECT_NO_THROW(check_download_options(offline));
}

}  // namespace
}  // namespace hfget
