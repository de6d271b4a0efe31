// SPDX-License-Identifier: MIT
// The Hub connection a command builds from its flags and the environment: the flags win, the endpoint loses
// its trailing '/', its origin is named for messages, and a --ca-bundle that is not a file is refused.
#include "cli/hub_options.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "hfget/error.hpp"
#include "support/temp_dir.hpp"

namespace hfget::cli {
namespace {

HubEnvironment environment() {
  HubEnvironment env;
  env.endpoint = "https://hub.example";
  env.endpoint_origin = "HF_ENDPOINT=https://hub.example";
  env.token = Secret("hf_from_environment");
  env.ca_bundle = "/etc/ssl/env-ca.pem";
  env.ca_path = "/etc/ssl/certs";
  env.retry_base_delay = std::chrono::milliseconds(5);
  return env;
}

TEST(HubConnectionFromFlags, TakesTheEnvironmentWhenNoFlagIsGiven) {
  const HubConnection hub = hub_connection(HubFlags{}, environment());
  EXPECT_EQ(hub.endpoint, "https://hub.example");
  EXPECT_EQ(hub.endpoint_origin, "HF_ENDPOINT=https://hub.example");
  EXPECT_EQ(hub.token.reveal(), "hf_from_environment");
  EXPECT_EQ(hub.ca_bundle, std::filesystem::path("/etc/ssl/env-ca.pem"));
  EXPECT_EQ(hub.ca_path, std::filesystem::path("/etc/ssl/certs"));
  EXPECT_EQ(hub.retry_base_delay, std::chrono::milliseconds(5));
  EXPECT_EQ(hub.max_attempts, HubConnection{}.max_attempts);  // each command sets its --retries
}

TEST(HubConnectionFromFlags, LetsTheFlagsWinAndNamesTheEndpointsOrigin) {
  const test_support::TempDir dir;
  std::ofstream(dir / "ca.pem") << "PEM";
  HubFlags flags;
  flags.endpoint = "http://127.0.0.1:8080//";
  flags.token = "hf_from_flag";
  flags.ca_bundle = (dir / "ca.pem").string();
  const HubConnection hub = hub_connection(flags, environment());
  EXPECT_EQ(hub.endpoint, "http://127.0.0.1:8080");
  EXPECT_EQ(hub.endpoint_origin, "--endpoint http://127.0.0.1:8080//");
  EXPECT_EQ(hub.token.reveal(), "hf_from_flag");
  EXPECT_EQ(hub.ca_bundle, dir / "ca.pem");
}

TEST(HubConnectionFromFlags, RefusesACaBundleThatIsNotAFile) {
  HubFlags flags;
  flags.ca_bundle = "/nonexistent/ca.pem";
  try {
    hub_connection(flags, environment());
    ADD_FAILURE() << "no error for a missing --ca-bundle";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kUsage);
    EXPECT_NE(std::string(error.what()).find("--ca-bundle: no such file"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace hfget::cli
