// SPDX-License-Identifier: MIT
#include "store/partial_claim.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "support/dead_pid.hpp"
#include "support/temp_dir.hpp"

namespace hfget::store {
namespace {

using test_support::dead_pid;
using test_support::TempDir;

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

std::string this_host() {
  // The owner part of a name this process makes: "<stem>.<host>-<pid>-<random>.hfget-partial".
  const std::string name = private_partial_path("/x/s.hfget-partial").filename().string();
  const std::string owner = name.substr(2, name.size() - 2 - std::string(".hfget-partial").size());
  return owner.substr(0, owner.find('-'));
}

TEST(PartialClaim, EachOpenGetsItsOwnNameBesideTheSharedOne) {
  const std::filesystem::path shared = "/cache/blobs/abc.hfget-partial";
  const std::filesystem::path first = private_partial_path(shared);
  const std::filesystem::path second = private_partial_path(shared);
  EXPECT_NE(first, second) << "two jobs of one process never share a partial file";
  EXPECT_EQ(first.parent_path(), shared.parent_path());
  EXPECT_TRUE(first.filename().string().starts_with("abc."));
  EXPECT_TRUE(first.filename().string().ends_with(".hfget-partial"));
  EXPECT_NE(first.filename().string().find("-" + std::to_string(::getpid()) + "-"), std::string::npos);
  EXPECT_EQ(journal_path_for(first).extension(), ".hfget-journal");
}

TEST(PartialClaim, ClaimsTheFullestPartialOfAGoneOwnerWithItsJournal) {
  TempDir dir;
  const std::filesystem::path shared = dir / "abc.hfget-partial";
  const std::string gone = this_host() + "-" + std::to_string(dead_pid()) + "-0000beef";
  write_file(dir / ("abc." + gone + ".hfget-partial"), std::string(100000, 'x'));
  write_file(dir / ("abc." + gone + ".hfget-journal"), "journal");
  write_file(shared, "small");  // an older run's, under the shared name
  const std::filesystem::path mine = private_partial_path(shared);
  ASSERT_TRUE(claim_abandoned_partial(shared, mine));
  EXPECT_EQ(std::filesystem::file_size(mine), 100000U);
  EXPECT_TRUE(std::filesystem::exists(journal_path_for(mine)));
  EXPECT_FALSE(std::filesystem::exists(dir / ("abc." + gone + ".hfget-partial")));
  EXPECT_TRUE(std::filesystem::exists(shared)) << "only one is claimed";
}

TEST(PartialClaim, NeverClaimsAPartialWhoseOwnerIsAlive) {
  TempDir dir;
  const std::filesystem::path shared = dir / "abc.hfget-partial";
  const std::filesystem::path live = private_partial_path(shared);  // owned by this (live) process
  write_file(live, "data");
  // Another host's partial, written just now: its owner cannot be asked, and it is being written.
  write_file(dir / "abc.otherhost-12-0000beef.hfget-partial", "data");
  EXPECT_FALSE(claim_abandoned_partial(shared, private_partial_path(shared)));
  remove_abandoned_partials(shared);
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_TRUE(std::filesystem::exists(dir / "abc.otherhost-12-0000beef.hfget-partial"));
}

// After a reboot, the PID in a partial's name often belongs to another process by now (here: this test
// process, which started after the partial was last written). The partial is resumed all the same, and once
// claimed it reads as its new owner's.
TEST(PartialClaim, APartialWhosePidWasReusedIsClaimedAndThenLooksOwned) {
  TempDir dir;
  const std::filesystem::path shared = dir / "abc.hfget-partial";
  const std::filesystem::path before_reboot = private_partial_path(shared);  // names this process's PID
  write_file(before_reboot, std::string(5000, 'x'));
  write_file(journal_path_for(before_reboot), "journal");
  const auto an_hour_ago = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
  std::filesystem::last_write_time(before_reboot, an_hour_ago);
  std::filesystem::last_write_time(journal_path_for(before_reboot), an_hour_ago);
  const std::filesystem::path mine = private_partial_path(shared);
  ASSERT_TRUE(claim_abandoned_partial(shared, mine));
  EXPECT_EQ(std::filesystem::file_size(mine), 5000U);
  EXPECT_TRUE(std::filesystem::exists(journal_path_for(mine)));
  const std::vector<PartialCandidate> found = find_partials(shared);
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0].partial, mine);
  EXPECT_TRUE(found[0].owner_alive) << "a claimed partial must not look abandoned to another run";
}

TEST(PartialClaim, AnotherHostsPartialUntouchedForLongIsAbandoned) {
  TempDir dir;
  const std::filesystem::path shared = dir / "abc.hfget-partial";
  const std::filesystem::path stale = dir / "abc.otherhost-12-0000beef.hfget-partial";
  write_file(stale, "data");
  std::filesystem::last_write_time(stale, std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
  const std::vector<PartialCandidate> found = find_partials(shared);
  ASSERT_EQ(found.size(), 1U);
  EXPECT_FALSE(found[0].owner_alive);
  remove_abandoned_partials(shared);
  EXPECT_FALSE(std::filesystem::exists(stale));
}

TEST(PartialClaim, RemovesWhatAGoneOwnerLeftBesideItsPartial) {
  TempDir dir;
  const std::filesystem::path shared = dir / "abc.hfget-partial";
  const std::string gone = this_host() + "-" + std::to_string(dead_pid()) + "-0000beef";
  write_file(dir / ("abc." + gone + ".hfget-journal"), "header only");  // its empty partial was removed
  write_file(dir / (".abc." + gone + ".hfget-journal.12345678.hfget-tmp"), "cut short");
  const std::filesystem::path live_journal = journal_path_for(private_partial_path(shared));
  write_file(live_journal, "a live owner's");
  write_file(dir / "abcd.hfget-journal", "another file's");
  remove_abandoned_partials(shared);
  EXPECT_FALSE(std::filesystem::exists(dir / ("abc." + gone + ".hfget-journal")));
  EXPECT_FALSE(std::filesystem::exists(dir / (".abc." + gone + ".hfget-journal.12345678.hfget-tmp")));
  EXPECT_TRUE(std::filesystem::exists(live_journal));
  EXPECT_TRUE(std::filesystem::exists(dir / "abcd.hfget-journal"));
}

TEST(PartialClaim, IgnoresNamesThatOnlyLookAlike) {
  TempDir dir;
  const std::filesystem::path shared = dir / "a.bin.0123456789abcdef.hfget-partial";
  // The partial of another file, "a.bin.0123456789abcdef.x", whose name starts the same way.
  write_file(dir / "a.bin.0123456789abcdef.x.fedcba9876543210.hfget-partial", "other");
  write_file(dir / "a.bin.0123456789abcdef.not-an-owner.hfget-partial", "other");
  EXPECT_TRUE(find_partials(shared).empty());
}

TEST(LeftoverIndex, KnowsEveryKindOfLeftoverOfAFileAndNothingOfOthers) {
  const TempDir dir;
  write_file(dir / "a.hfget-partial", "x");                                // the shared name (older versions)
  write_file(dir / "b.host-1-ab.hfget-partial", "x");                      // an owner's partial file
  write_file(dir / "c.host-1-ab.hfget-journal", "");                       // a journal alone
  write_file(dir / ".d.host-1-ab.hfget-journal.host-2-cd.hfget-tmp", "");  // a journal rewrite cut short
  write_file(dir / "e", "a complete blob");
  write_file(dir / "ff.hfget-partial", "x");  // another stem that starts alike
  LeftoverIndex index;
  for (const std::string stem : {"a", "b", "c", "d", "ff"}) {
    EXPECT_TRUE(index.may_have_leftovers(dir / (stem + ".hfget-partial"))) << stem;
  }
  for (const std::string stem : {"e", "f", "b.host"}) {
    EXPECT_FALSE(index.may_have_leftovers(dir / (stem + ".hfget-partial"))) << stem;
  }
  EXPECT_FALSE(index.may_have_leftovers(dir / "no-such-folder" / "a.hfget-partial"));
}

TEST(LeftoverIndex, ListsAFolderOnceARun) {
  const TempDir dir;
  LeftoverIndex index;
  EXPECT_FALSE(index.may_have_leftovers(dir / "a.hfget-partial"));
  // Left by another run after this one listed the folder: the next run's business.
  write_file(dir / "a.hfget-partial", "x");
  EXPECT_FALSE(index.may_have_leftovers(dir / "a.hfget-partial"));
  EXPECT_TRUE(LeftoverIndex().may_have_leftovers(dir / "a.hfget-partial"));
}

}  // namespace
}  // namespace hfget::store
