// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <fstream>

#include "hfget/environment.hpp"
#include "support/scoped_env.hpp"
#include "support/temp_dir.hpp"

namespace hfget {
namespace {

using test_support::ScopedEnv;
using test_support::TempDir;

TEST(CleanToken, RemovesLineBreaksAnywhereAndStripsSurroundingWhitespace) {
  EXPECT_EQ(clean_token("hf_abc\n"), "hf_abc");
  EXPECT_EQ(clean_token("  hf_abc\r\n"), "hf_abc");
  EXPECT_EQ(clean_token("hf_\nab\rc"), "hf_abc");
  EXPECT_EQ(clean_token("\t hf_abc \f\v"), "hf_abc");
  EXPECT_EQ(clean_token("hf_a b"), "hf_a b");
  EXPECT_EQ(clean_token(" \r\n "), "");
  EXPECT_EQ(clean_token(""), "");
}

// Every test starts from an environment where none of the variables the Hub client reads is set, and HOME is a
// temp dir, so the developer's own cache and token never leak in.
class HubEnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"HF_HOME", "XDG_CACHE_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_ENDPOINT",
                             "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_OFFLINE",
                             "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS", "HF_HUB_DISABLE_SYMLINKS",
                             "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR"}) {
      env_.unset(name);
    }
    env_.set("HOME", home_.path().string());
  }

  static void write_file(const std::filesystem::path& path, const std::string& content) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << content;
  }

  TempDir home_;
  ScopedEnv env_;  // declared after home_: restored before the directory goes
};

TEST_F(HubEnvironmentTest, DefaultsFollowHome) {
  const HubEnvironment hub = HubEnvironment::from_process_environment();
  EXPECT_EQ(hub.hf_home, home_.path() / ".cache" / "huggingface");
  EXPECT_EQ(hub.hub_cache, home_.path() / ".cache" / "huggingface" / "hub");
  EXPECT_EQ(hub.endpoint, "https://huggingface.co");
  EXPECT_TRUE(hub.token.empty());
  EXPECT_FALSE(hub.offline);
  EXPECT_FALSE(hub.progress_bars_disabled);
  EXPECT_FALSE(hub.ca_bundle);
  EXPECT_FALSE(hub.ca_path);
}

TEST_F(HubEnvironmentTest, HubCachePrefersHfHubCache) {
  env_.set("HF_HUB_CACHE", "/a").set("HUGGINGFACE_HUB_CACHE", "/b").set("HF_HOME", "/c").set("XDG_CACHE_HOME", "/d");
  EXPECT_EQ(HubEnvironment::from_process_environment().hub_cache, std::filesystem::path("/a"));
}

TEST_F(HubEnvironmentTest, HubCacheFallsBackToTheLegacyVariable) {
  env_.set("HUGGINGFACE_HUB_CACHE", "/b").set("HF_HOME", "/c").set("XDG_CACHE_HOME", "/d");
  EXPECT_EQ(HubEnvironment::from_process_environment().hub_cache, std::filesystem::path("/b"));
}

TEST_F(HubEnvironmentTest, HubCacheFallsBackToHfHome) {
  env_.set("HF_HOME", "/c").set("XDG_CACHE_HOME", "/d");
  const HubEnvironment hub = HubEnvironment::from_process_environment();
  EXPECT_EQ(hub.hf_home, std::filesystem::path("/c"));
  EXPECT_EQ(hub.hub_cache, std::filesystem::path("/c/hub"));
}

TEST_F(HubEnvironmentTest, HubCacheFallsBackToXdgCacheHome) {
  env_.set("XDG_CACHE_HOME", "/d");
  const HubEnvironment hub = HubEnvironment::from_process_environment();
  EXPECT_EQ(hub.hf_home, std::filesystem::path("/d/huggingface"));
  EXPECT_EQ(hub.hub_cache, std::filesystem::path("/d/huggingface/hub"));
}

TEST_F(HubEnvironmentTest, PathsAreExpanded) {
  env_.set("HFGET_TEST_ROOT", "/srv").set("HF_HOME", "~/hf").set("HF_HUB_CACHE", "${HFGET_TEST_ROOT}/hub");
  const HubEnvironment hub = HubEnvironment::from_process_environment();
  EXPECT_EQ(hub.hf_home, home_.path() / "hf");
  EXPECT_EQ(hub.hub_cache, std::filesystem::path("/srv/hub"));
}

TEST_F(HubEnvironmentTest, EndpointLosesTrailingSlashes) {
  env_.set("HF_ENDPOINT", "http://127.0.0.1:8080/");
  EXPECT_EQ(HubEnvironment::from_process_environment().endpoint, "http://127.0.0.1:8080");
  env_.set("HF_ENDPOINT", "https://mirror.example/hf//");
  EXPECT_EQ(HubEnvironment::from_process_environment().endpoint, "https://mirror.example/hf");
}

TEST_F(HubEnvironmentTest, EndpointOriginNamesTheVariableAsSet) {
  EXPECT_EQ(HubEnvironment::from_process_environment().endpoint_origin, "");  // the default: nothing to name
  env_.set("HF_ENDPOINT", "http://127.0.0.1:9/");
  EXPECT_EQ(HubEnvironment::from_process_environment().endpoint_origin, "HF_ENDPOINT=http://127.0.0.1:9/");
}

TEST_F(HubEnvironmentTest, TokenPrefersHfToken) {
  env_.set("HF_TOKEN", "hf_first\n").set("HUGGING_FACE_HUB_TOKEN", "hf_second");
  const std::filesystem::path token_file = home_ / "token-file";
  write_file(token_file, "hf_third");
  env_.set("HF_TOKEN_PATH", token_file.string());
  EXPECT_EQ(HubEnvironment::from_process_environment().token.reveal(), "hf_first");
}

TEST_F(HubEnvironmentTest, TokenFallsBackToTheLegacyVariable) {
  env_.set("HUGGING_FACE_HUB_TOKEN", " hf_second ");
  const std::filesystem::path token_file = home_ / "token-file";
  write_file(token_file, "hf_third");
  env_.set("HF_TOKEN_PATH", token_file.string());
  EXPECT_EQ(HubEnvironment::from_process_environment().token.reveal(), "hf_second");
}

TEST_F(HubEnvironmentTest, TokenFallsBackToHfTokenPath) {
  const std::filesystem::path token_file = home_ / "elsewhere" / "token";
  write_file(token_file, "hf_third\r\n");
  write_file(home_ / ".cache" / "huggingface" / "token", "hf_fourth");
  env_.set("HF_TOKEN_PATH", token_file.string());
  EXPECT_EQ(HubEnvironment::from_process_environment().token.reveal(), "hf_third");
}

TEST_F(HubEnvironmentTest, TokenFallsBackToTheFileInHfHome) {
  env_.set("HF_HOME", (home_ / "hf").string());
  write_file(home_ / "hf" / "token", "hf_fourth\n");
  EXPECT_EQ(HubEnvironment::from_process_environment().token.reveal(), "hf_fourth");
}

TEST_F(HubEnvironmentTest, EmptyTokenVariablesDoNotHideTheTokenFile) {
  env_.set("HF_TOKEN", "").set("HUGGING_FACE_HUB_TOKEN", "");
  write_file(home_ / ".cache" / "huggingface" / "token", "hf_fourth");
  EXPECT_EQ(HubEnvironment::from_process_environment().token.reveal(), "hf_fourth");
}

TEST_F(HubEnvironmentTest, NoTokenWhenTheTokenFileIsMissing) {
  env_.set("HF_TOKEN_PATH", (home_ / "missing").string());
  EXPECT_TRUE(HubEnvironment::from_process_environment().token.empty());
}

TEST_F(HubEnvironmentTest, OfflineAcceptsTheTruthyValues) {
  for (const char* truthy : {"1", "ON", "yes", "True"}) {
    env_.set("HF_HUB_OFFLINE", truthy);
    EXPECT_TRUE(HubEnvironment::from_process_environment().offline) << truthy;
  }
  for (const char* falsy : {"0", "", "false", "off", "nope"}) {
    env_.set("HF_HUB_OFFLINE", falsy);
    EXPECT_FALSE(HubEnvironment::from_process_environment().offline) << falsy;
  }
}

TEST_F(HubEnvironmentTest, OfflineAlsoFollowsTransformersOffline) {
  env_.set("TRANSFORMERS_OFFLINE", "1");
  EXPECT_TRUE(HubEnvironment::from_process_environment().offline);
}

TEST_F(HubEnvironmentTest, ProgressBarsCanBeDisabled) {
  env_.set("HF_HUB_DISABLE_PROGRESS_BARS", "1");
  EXPECT_TRUE(HubEnvironment::from_process_environment().progress_bars_disabled);
}

TEST_F(HubEnvironmentTest, SymlinksCanBeDisabledWithTheTruthyValues) {
  EXPECT_FALSE(HubEnvironment::from_process_environment().symlinks_disabled);
  for (const char* truthy : {"1", "ON", "yes", "True"}) {
    env_.set("HF_HUB_DISABLE_SYMLINKS", truthy);
    EXPECT_TRUE(HubEnvironment::from_process_environment().symlinks_disabled) << truthy;
  }
  for (const char* falsy : {"0", "", "false"}) {
    env_.set("HF_HUB_DISABLE_SYMLINKS", falsy);
    EXPECT_FALSE(HubEnvironment::from_process_environment().symlinks_disabled) << falsy;
  }
  // Only silences the Python client's warning; it does not disable anything.
  env_.unset("HF_HUB_DISABLE_SYMLINKS");
  env_.set("HF_HUB_DISABLE_SYMLINKS_WARNING", "1");
  EXPECT_FALSE(HubEnvironment::from_process_environment().symlinks_disabled);
}

TEST_F(HubEnvironmentTest, CaBundlePrefersCurlCaBundle) {
  env_.set("SSL_CERT_FILE", "/etc/b.pem").set("SSL_CERT_DIR", "/etc/certs");
  HubEnvironment hub = HubEnvironment::from_process_environment();
  EXPECT_EQ(hub.ca_bundle, std::filesystem::path("/etc/b.pem"));
  EXPECT_EQ(hub.ca_path, std::filesystem::path("/etc/certs"));
  env_.set("CURL_CA_BUNDLE", "/etc/a.pem");
  hub = HubEnvironment::from_process_environment();
  EXPECT_EQ(hub.ca_bundle, std::filesystem::path("/etc/a.pem"));
}

}  // namespace
}  // namespace hfget
