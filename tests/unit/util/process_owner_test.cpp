// SPDX-License-Identifier: MIT
#include "util/process_owner.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "support/temp_dir.hpp"

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

TEST(ProcessOwner, TheLongestTokenIsStillOne) {
  const std::string longest = std::string(32, 'h') + "-4294967295-0000beef";
  EXPECT_EQ(longest.size(), kMaxOwnerTokenBytes);
  EXPECT_TRUE(parse_owner_token(longest));
  EXPECT_FALSE(parse_owner_token(std::string(33, 'h') + "-4294967295-0000beef")) << "no longer one passes";
  EXPECT_LE(new_owner_token().size(), kMaxOwnerTokenBytes);
}

// After a reboot a partial file's owner PID often names another, newer process. That process started after
// the file was last written, so it is not the owner. This test process plays the newer process.
TEST(ProcessOwner, AProcessThatStartedAfterTheFilesWereLastWrittenIsNotTheirOwner) {
  test_support::TempDir dir;
  const std::filesystem::path partial = dir / "partial";
  std::ofstream(partial) << "bytes";
  const std::optional<ProcessOwner> owner = parse_owner_token(new_owner_token());
  ASSERT_TRUE(owner.has_value());
  EXPECT_TRUE(owner_may_be_alive(*owner, {partial})) << "written after this process started: it may be the owner";
  std::filesystem::last_write_time(partial, std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
  EXPECT_FALSE(owner_may_be_alive(*owner, {partial})) << "written an hour before this process started";
  EXPECT_FALSE(owner_may_be_alive(*owner, {partial, dir / "journal-not-there"})) << "a missing file does not count";
  std::ofstream(dir / "journal") << "fresh";
  EXPECT_TRUE(owner_may_be_alive(*owner, {partial, dir / "journal"})) << "the newest of the files counts";
  EXPECT_TRUE(owner_may_be_alive(*owner, {dir / "nothing-here"})) << "no file to compare with: presumed alive";
}

TEST(ProcessOwner, ProcShowsThisProcessRunningAndStartedBeforeNow) {
  const std::optional<ProcessStat> self = read_process_stat(::getpid());
  ASSERT_TRUE(self.has_value());
  EXPECT_NE(self->state, 'Z');
  ASSERT_TRUE(self->started.has_value());
  EXPECT_LE(*self->started, std::chrono::system_clock::now() + std::chrono::seconds(2));
  EXPECT_FALSE(started_after(*self, std::chrono::system_clock::now()));
  EXPECT_TRUE(started_after(*self, std::chrono::system_clock::now() - std::chrono::hours(24 * 365 * 30)));
}

TEST(ProcessOwner, AnotherHostsOwnerIsAliveOnlyWhileItsFilesAreFresh) {
  const ProcessOwner elsewhere{"otherhost", 12};
  EXPECT_FALSE(owner_may_be_alive(elsewhere, {"/nonexistent/file"}));
}

}  // namespace
}  // namespace hfget::util
