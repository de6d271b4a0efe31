// SPDX-License-Identifier: MIT
#include "util/process_owner.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

namespace hfget::util {
namespace {

TEST(ProcessOwner, ATokenNamesThisProcessAndParsesBack) {
  const std::string token = new_owner_token();
  const std::optional<ProcessOwner> owner = parse_owner_token(token);
  ASSERT_TRUE(owner.has_value()) << token;
  EXPECT_EQ(owner->pid, ::getpid());
  EXPECT_EQ(token.find('.'), std::string::npos) << "no '.': no other file name passes for one";
  EXPECT_NE(new_owner_token(), token);
  EXPECT_TRUE(owner_may_be_alive(*owner, {}));
}

TEST(ProcessOwner, RejectsWhatIsNotExactlyAToken) {
  EXPECT_FALSE(parse_owner_token("host-12-0000beef.x"));
  EXPECT_FALSE(parse_owner_token("ho.st-12-0000beef"));
  EXPECT_FALSE(parse_owner_token("host-12-beef"));
  EXPECT_FALSE(parse_owner_token("host-x-0000beef"));
  EXPECT_FALSE(parse_owner_token(""));
}

TEST(ProcessOwner, AnotherHostsOwnerIsAliveOnlyWhileItsFilesAreFresh) {
  const ProcessOwner elsewhere{"otherhost", 12};
  EXPECT_FALSE(owner_may_be_alive(elsewhere, {"/nonexistent/file"}));
}

}  // namespace
}  // namespace hfget::util
