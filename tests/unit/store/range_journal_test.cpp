// SPDX-License-Identifier: MIT
#include "store/range_journal.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/temp_dir.hpp"

namespace hfget::store {
namespace {

using test_support::TempDir;
const std::string kEtag(64, 'a');

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(MergeRange, MergesOverlapsAndNeighboursAndKeepsOrder) {
  std::vector<ByteRange> ranges;
  merge_range(ranges, {10, 20});
  merge_range(ranges, {30, 40});
  merge_range(ranges, {0, 5});
  EXPECT_EQ(ranges, (std::vector<ByteRange>{{0, 5}, {10, 20}, {30, 40}}));
  merge_range(ranges, {20, 30});  // touches both neighbours
  EXPECT_EQ(ranges, (std::vector<ByteRange>{{0, 5}, {10, 40}}));
  merge_range(ranges, {3, 12});
  EXPECT_EQ(ranges, (std::vector<ByteRange>{{0, 40}}));
  merge_range(ranges, {7, 7});  // empty: ignored
  EXPECT_EQ(ranges, (std::vector<ByteRange>{{0, 40}}));
}

TEST(RangeJournal, WithoutAFileTrustsTheContiguousPrefix) {
  TempDir dir;
  const RangeJournal journal = RangeJournal::open(dir / "j", 100, kEtag, 40);
  EXPECT_EQ(journal.completed(), (std::vector<ByteRange>{{0, 40}}));
  EXPECT_EQ(journal.missing(), (std::vector<ByteRange>{{40, 100}}));
  EXPECT_EQ(journal.contiguous_prefix(), 40U);
}

TEST(RangeJournal, ReopensWhatWasRecorded) {
  TempDir dir;
  {
    RangeJournal journal = RangeJournal::open(dir / "j", 100, kEtag, 0);
    journal.persist();
    journal.add({50, 60});
    journal.add({0, 10});
    journal.add({10, 20});
  }
  const RangeJournal reopened = RangeJournal::open(dir / "j", 100, kEtag, 0);
  EXPECT_EQ(reopened.completed(), (std::vector<ByteRange>{{0, 20}, {50, 60}}));
  EXPECT_EQ(reopened.completed_bytes(), 30U);
  EXPECT_EQ(reopened.missing(), (std::vector<ByteRange>{{20, 50}, {60, 100}}));
}

TEST(RangeJournal, IgnoresALineTornByAKill) {
  TempDir dir;
  {
    RangeJournal journal = RangeJournal::open(dir / "j", 100, kEtag, 0);
    journal.persist();
    journal.add({0, 10});
  }
  std::ofstream(dir / "j", std::ios::app) << "10 9";  // no newline: the write was cut
  EXPECT_EQ(RangeJournal::open(dir / "j", 100, kEtag, 0).completed(), (std::vector<ByteRange>{{0, 10}}));
}

TEST(RangeJournal, TrustsNothingForAnotherVersionOfTheFile) {
  TempDir dir;
  {
    RangeJournal journal = RangeJournal::open(dir / "j", 100, kEtag, 0);
    journal.persist();
    journal.add({0, 50});
  }
  EXPECT_TRUE(RangeJournal::open(dir / "j", 101, kEtag, 0).completed().empty());
  EXPECT_TRUE(RangeJournal::open(dir / "j", 100, std::string(64, 'b'), 0).completed().empty());
  std::ofstream(dir / "j", std::ios::app) << "0 500\n";  // beyond the file: damaged
  EXPECT_TRUE(RangeJournal::open(dir / "j", 100, kEtag, 0).completed().empty());
}

TEST(RangeJournal, ResetAndRemove) {
  TempDir dir;
  RangeJournal journal = RangeJournal::open(dir / "j", 100, kEtag, 0);
  journal.persist();
  journal.add({0, 100});
  journal.reset();
  EXPECT_TRUE(RangeJournal::open(dir / "j", 100, kEtag, 0).completed().empty());
  EXPECT_EQ(read_all(dir / "j").find('\n'), read_all(dir / "j").size() - 1) << "only the header remains";
  journal.remove();
  EXPECT_FALSE(std::filesystem::exists(dir / "j"));
}

TEST(RangeJournal, KeepsTheValidatorAcrossReopenAndReset) {
  TempDir dir;
  const BodyValidator cdn{"https://cdn.example:443", "\"abc\""};
  {
    RangeJournal journal = RangeJournal::open(dir / "j", 100, kEtag, 0);
    journal.persist();
    journal.add({0, 10});
    journal.set_validator(cdn);
    journal.add({10, 20});
  }
  RangeJournal reopened = RangeJournal::open(dir / "j", 100, kEtag, 0);
  EXPECT_EQ(reopened.validator(), cdn);
  EXPECT_EQ(reopened.completed(), (std::vector<ByteRange>{{0, 20}})) << "the ranges survive the header rewrite";
  const BodyValidator changed{"https://cdn.example:443", "\"def\""};
  reopened.reset(changed);
  EXPECT_EQ(RangeJournal::open(dir / "j", 100, kEtag, 0).validator(), changed);
  EXPECT_TRUE(RangeJournal::open(dir / "j", 100, kEtag, 0).completed().empty());
}

TEST(RangeJournal, ReadsAJournalWrittenWithoutAValidator) {
  TempDir dir;
  std::ofstream(dir / "j") << R"({"etag":")" << kEtag << R"(","format_version":1,"size":100})"
                           << "\n0 30\n";
  const RangeJournal journal = RangeJournal::open(dir / "j", 100, kEtag, 0);
  EXPECT_EQ(journal.completed(), (std::vector<ByteRange>{{0, 30}}));
  EXPECT_FALSE(journal.validator().has_value());
}

TEST(RangeJournal, TrustsNothingUnderADamagedHeader) {
  TempDir dir;
  std::ofstream(dir / "j") << R"({"etag":")" << kEtag << R"(","format_version":1,"size":100,"validator":7})"
                           << "\n0 30\n";
  EXPECT_TRUE(RangeJournal::open(dir / "j", 100, kEtag, 0).completed().empty());
  std::ofstream(dir / "j") << "not json\n0 30\n";
  EXPECT_TRUE(RangeJournal::open(dir / "j", 100, kEtag, 0).completed().empty());
}

}  // namespace
}  // namespace hfget::store
