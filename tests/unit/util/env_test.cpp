// SPDX-License-Identifier: MIT
#include "util/env.hpp"

#include <gtest/gtest.h>

#include "support/scoped_env.hpp"

namespace hfget::util {
namespace {

using test_support::ScopedEnv;

TEST(EnvValue, DistinguishesUnsetFromEmpty) {
  ScopedEnv env;
  env.set("HFGET_TEST_EMPTY", "").unset("HFGET_TEST_UNSET");
  EXPECT_EQ(env_value("HFGET_TEST_EMPTY"), std::optional<std::string>(""));
  EXPECT_EQ(env_value("HFGET_TEST_UNSET"), std::nullopt);
}

TEST(EnvNonempty, TreatsEmptyAsUnset) {
  ScopedEnv env;
  env.set("HFGET_TEST_EMPTY", "").set("HFGET_TEST_SET", "x");
  EXPECT_EQ(env_nonempty("HFGET_TEST_EMPTY"), std::nullopt);
  EXPECT_EQ(env_nonempty("HFGET_TEST_SET"), std::optional<std::string>("x"));
}

TEST(EnvFlag, AcceptsTheHubClientsTruthyValuesInAnyCase) {
  ScopedEnv env;
  for (const char* truthy : {"1", "ON", "on", "Yes", "TRUE", "true"}) {
    env.set("HFGET_TEST_FLAG", truthy);
    EXPECT_TRUE(env_flag("HFGET_TEST_FLAG")) << truthy;
  }
  for (const char* falsy : {"", "0", "off", "no", "false", "2", " 1", "enabled"}) {
    env.set("HFGET_TEST_FLAG", falsy);
    EXPECT_FALSE(env_flag("HFGET_TEST_FLAG")) << '"' << falsy << '"';
  }
  env.unset("HFGET_TEST_FLAG");
  EXPECT_FALSE(env_flag("HFGET_TEST_FLAG"));
}

TEST(ExpandUserAndVars, ExpandsTildeWithHome) {
  ScopedEnv env;
  env.set("HOME", "/home/tester");
  EXPECT_EQ(expand_user_and_vars("~"), std::filesystem::path("/home/tester"));
  EXPECT_EQ(expand_user_and_vars("~/.cache/hf"), std::filesystem::path("/home/tester/.cache/hf"));
}

TEST(ExpandUserAndVars, LeavesTildeUserAndInnerTildeAlone) {
  ScopedEnv env;
  env.set("HOME", "/home/tester");
  EXPECT_EQ(expand_user_and_vars("~other/x"), std::filesystem::path("~other/x"));
  EXPECT_EQ(expand_user_and_vars("a/~/b"), std::filesystem::path("a/~/b"));
}

TEST(ExpandUserAndVars, ExpandsDollarAndBracedVariables) {
  ScopedEnv env;
  env.set("HFGET_TEST_ROOT", "/data").set("HFGET_TEST_SUB", "hub");
  EXPECT_EQ(expand_user_and_vars("$HFGET_TEST_ROOT/x"), std::filesystem::path("/data/x"));
  EXPECT_EQ(expand_user_and_vars("${HFGET_TEST_ROOT}/${HFGET_TEST_SUB}"), std::filesystem::path("/data/hub"));
  EXPECT_EQ(expand_user_and_vars("${HFGET_TEST_SUB}s"), std::filesystem::path("hubs"));
}

TEST(ExpandUserAndVars, VariableNameEndsAtTheFirstNonWordCharacter) {
  ScopedEnv env;
  env.set("HFGET_TEST_A", "v");
  EXPECT_EQ(expand_user_and_vars("$HFGET_TEST_A-x.$HFGET_TEST_A"), std::filesystem::path("v-x.v"));
}

TEST(ExpandUserAndVars, LeavesUnsetVariablesAsWritten) {
  ScopedEnv env;
  env.unset("HFGET_TEST_NOPE");
  EXPECT_EQ(expand_user_and_vars("$HFGET_TEST_NOPE/a"), std::filesystem::path("$HFGET_TEST_NOPE/a"));
  EXPECT_EQ(expand_user_and_vars("${HFGET_TEST_NOPE}/a"), std::filesystem::path("${HFGET_TEST_NOPE}/a"));
  EXPECT_EQ(expand_user_and_vars("cost$"), std::filesystem::path("cost$"));
  EXPECT_EQ(expand_user_and_vars("${unclosed"), std::filesystem::path("${unclosed"));
  EXPECT_EQ(expand_user_and_vars("$/x"), std::filesystem::path("$/x"));
}

TEST(ExpandUserAndVars, ExpandsAVariableSetToEmpty) {
  ScopedEnv env;
  env.set("HFGET_TEST_EMPTY", "");
  EXPECT_EQ(expand_user_and_vars("a$HFGET_TEST_EMPTY/b"), std::filesystem::path("a/b"));
}

TEST(ExpandUserAndVars, ExpandsUserBeforeVariables) {
  ScopedEnv env;
  env.set("HOME", "/home/tester").set("HFGET_TEST_SUB", "hub");
  EXPECT_EQ(expand_user_and_vars("~/$HFGET_TEST_SUB"), std::filesystem::path("/home/tester/hub"));
  // A variable whose value starts with '~' is not expanded again, as in Python.
  env.set("HFGET_TEST_TILDE", "~/x");
  EXPECT_EQ(expand_user_and_vars("$HFGET_TEST_TILDE"), std::filesystem::path("~/x"));
}

}  // namespace
}  // namespace hfget::util
