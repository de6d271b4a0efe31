// SPDX-License-Identifier: MIT
#include "store/download_record.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/temp_dir.hpp"

namespace hfget::store {
namespace {

using test_support::TempDir;

const std::string kCommit = "1111111111111111111111111111111111111111";

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

TEST(RecordPath, IsUnderTheRepoFolderInTheCache) {
  EXPECT_EQ(record_path_in_cache("/c", RepoId::parse("org/name", RepoType::kDataset), kCommit),
            std::filesystem::path("/c/datasets--org--name/hfget") / (kCommit + ".json"));
}

TEST(RecordPath, IsUnderDotCacheInALocalDir) {
  EXPECT_EQ(record_path_in_local_dir("/l", kCommit),
            std::filesystem::path("/l/.cache/huggingface/hfget") / (kCommit + ".json"));
}

TEST(DownloadRecord, RoundTripsSortedAndUnique) {
  const TempDir dir;
  write_download_record(dir / "r.json", {kCommit, "main", {"b.bin", "a.json", "b.bin"}});
  const std::optional<DownloadRecord> record = read_download_record(dir / "r.json");
  ASSERT_TRUE(record);
  EXPECT_EQ(record->commit, kCommit);
  EXPECT_EQ(record->revision, "main");
  EXPECT_EQ(record->selected, (std::vector<std::string>{"a.json", "b.bin"}));
}

TEST(DownloadRecord, WriteMergesWithTheExistingSelection) {
  const TempDir dir;
  write_download_record(dir / "r.json", {kCommit, "main", {"a.json", "c.txt"}});
  write_download_record(dir / "r.json", {kCommit, "v1", {"b.bin"}});
  const std::optional<DownloadRecord> record = read_download_record(dir / "r.json");
  ASSERT_TRUE(record);
  EXPECT_EQ(record->revision, "v1");
  EXPECT_EQ(record->selected, (std::vector<std::string>{"a.json", "b.bin", "c.txt"}));
}

TEST(DownloadRecord, KeepsNonAsciiPathsAndEndsWithANewline) {
  const TempDir dir;
  write_download_record(dir / "r.json", {kCommit, "main", {"\xC3\xBC.txt"}});
  const std::string text = read_file(dir / "r.json");
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const std::optional<DownloadRecord> record = read_download_record(dir / "r.json");
  ASSERT_TRUE(record);
  EXPECT_EQ(record->selected, (std::vector<std::string>{"\xC3\xBC.txt"}));
}

TEST(DownloadRecord, ReadIsNulloptForAMissingFileOrAnotherFormat) {
  const TempDir dir;
  EXPECT_EQ(read_download_record(dir / "missing.json"), std::nullopt);
  for (const char* content : {"", "[]", R"({"format_version": 2, "selected": []})", R"({"format_version": 1})",
                              R"({"format_version": 1, "selected": {}})"}) {
    std::ofstream(dir / "r.json", std::ios::trunc) << content;
    EXPECT_EQ(read_download_record(dir / "r.json"), std::nullopt) << content;
  }
}

TEST(DownloadRecord, ReadSkipsEntriesThatAreNotStrings) {
  const TempDir dir;
  std::ofstream(dir / "r.json") << R"({"format_version": 1, "commit": "c", "selected": ["a", 3, null, "b"]})";
  const std::optional<DownloadRecord> record = read_download_record(dir / "r.json");
  ASSERT_TRUE(record);
  EXPECT_EQ(record->selected, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(record->revision, "");
}

TEST(DownloadRecord, AnUnreadableRecordIsReplaced) {
  const TempDir dir;
  std::ofstream(dir / "r.json") << "{ damaged";
  write_download_record(dir / "r.json", {kCommit, "main", {"a"}});
  const std::optional<DownloadRecord> record = read_download_record(dir / "r.json");
  ASSERT_TRUE(record);
  EXPECT_EQ(record->selected, (std::vector<std::string>{"a"}));
}

TEST(DownloadRecord, ReadIsNulloptForFieldsOfTheWrongType) {
  const TempDir dir;
  for (const char* content :
       {R"({"format_version": "1", "selected": []})", R"({"format_version": 1, "commit": 5, "selected": []})"}) {
    std::ofstream(dir / "r.json", std::ios::trunc) << content;
    std::optional<DownloadRecord> record;
    EXPECT_NO_THROW(record = read_download_record(dir / "r.json")) << content;
    EXPECT_NO_THROW(write_download_record(dir / "r.json", {kCommit, "main", {"a"}})) << content;
  }
}

}  // namespace
}  // namespace hfget::store
