// SPDX-License-Identifier: MIT
// `hfget env` goes into public issues: a proxy password must not, and each value must say where it came from.
#include "cli/env_command.hpp"

#include <gtest/gtest.h>

namespace hfget::cli {
namespace {

TEST(MaskedProxy, HidesThePasswordOnly) {
  EXPECT_EQ(masked_proxy("http://alice:s3cret@proxy:3128"), "http://alice:***@proxy:3128");
  EXPECT_EQ(masked_proxy("alice:s3cret@proxy:3128"), "alice:***@proxy:3128");
  EXPECT_EQ(masked_proxy("http://proxy:3128"), "http://proxy:3128");
  EXPECT_EQ(masked_proxy("http://alice@proxy:3128"), "http://alice@proxy:3128");
  EXPECT_EQ(masked_proxy("localhost,127.0.0.1"), "localhost,127.0.0.1");
}

TEST(EnvReport, TheTargetIsTheCacheUnlessADirectoryIsNamed) {
  HubEnvironment env;
  env.hub_cache = ::testing::TempDir();
  env.endpoint = "https://huggingface.co";
  EXPECT_EQ(collect_env_report(env, {}).target, env.hub_cache);
  const EnvReport named = collect_env_report(env, "/nonexistent-hfget-dir/a/b");
  EXPECT_EQ(named.target, "/nonexistent-hfget-dir/a/b");
  EXPECT_TRUE(named.free_bytes.has_value()) << "the free space of the nearest existing parent, /";
}

TEST(EnvReport, TextAndJsonSayWhereEachValueCameFrom) {
  EnvReport report;
  report.endpoint = {"http://hub.local", "HF_ENDPOINT"};
  report.hub_cache = {"/c/hub", "HF_HUB_CACHE"};
  report.token_set = true;
  report.token_origin = "HF_TOKEN";
  report.target = "/c/hub";
  const std::string text = env_report_text(report);
  EXPECT_NE(text.find("http://hub.local (from HF_ENDPOINT)"), std::string::npos) << text;
  EXPECT_NE(text.find("set, from HF_TOKEN"), std::string::npos) << text;
  EXPECT_NE(text.find("free space:     unknown"), std::string::npos) << text;
  const nlohmann::json json = env_report_json(report);
  EXPECT_EQ(json["hub_cache"]["from"], "HF_HUB_CACHE");
  EXPECT_EQ(json["token"]["set"], true);
  EXPECT_TRUE(json["free_bytes"].is_null());
}

}  // namespace
}  // namespace hfget::cli
