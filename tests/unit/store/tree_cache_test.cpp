// SPDX-License-Identifier: MIT
#include "store/tree_cache.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "support/temp_dir.hpp"

namespace hfget::store {
namespace {

using test_support::TempDir;

const std::string kBlobA = "ce013625030ba8dba906f756967f9e9ca394464a";
const std::string kBlobB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
const std::string kBlobC = "a9993e364706816aba3e25717850c26c9cd0d89d";
const std::string kSha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const std::string kXet = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

RemoteFile regular(const std::string& path, std::uint64_t size, const std::string& blob_id) {
  RemoteFile file;
  file.path = path;
  file.size = size;
  file.blob_id = blob_id;
  return file;
}

RemoteFile lfs(const std::string& path, std::uint64_t size, const std::string& blob_id,
               std::optional<std::string> xet_hash = std::nullopt) {
  RemoteFile file = regular(path, size, blob_id);
  file.lfs_sha256 = kSha256;
  file.lfs_size = size;
  file.xet_hash = std::move(xet_hash);
  return file;
}

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

// The golden strings below are Python's own output:
//   f = io.StringIO(); json.dump({"format_version": 1, "files": {p: files[p] for p in sorted(files)}}, f, indent=1)

TEST(SerializeTreeCache, MatchesPythonJsonDumpWithIndentOne) {
  const std::vector<RemoteFile> files = {
      regular("\xC3\xBC.txt", 3, kBlobB),  // "ü.txt"
      lfs("sub/dir/model.safetensors", 5'000'000'000, kBlobC, kXet),
      regular("config.json", 6, kBlobA),
  };
  EXPECT_EQ(serialize_tree_cache(files),
            "{\n \"format_version\": 1,\n \"files\": {\n  \"config.json\": {\n   \"size\": 6,\n   \"blob_id\": "
            "\"ce013625030ba8dba906f756967f9e9ca394464a\"\n  },\n  \"sub/dir/model.safetensors\": {\n   \"size\": "
            "5000000000,\n   \"blob_id\": \"a9993e364706816aba3e25717850c26c9cd0d89d\",\n   \"lfs_sha256\": "
            "\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\",\n   \"lfs_size\": 5000000000,\n   "
            "\"xet_hash\": \"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"\n  },\n  "
            "\"\\u00fc.txt\": {\n   \"size\": 3,\n   \"blob_id\": \"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\"\n  "
            "}\n }\n}");
}

TEST(SerializeTreeCache, WritesAnEmptyListingAsPythonDoes) {
  EXPECT_EQ(serialize_tree_cache({}), "{\n \"format_version\": 1,\n \"files\": {}\n}");
}

TEST(SerializeTreeCache, EscapesLikePythonsEnsureAscii) {
  const std::vector<RemoteFile> files = {
      regular("\xF0\x9F\x98\x80.bin", 1, kBlobA),                        // U+1F600, outside the BMP: a surrogate pair
      regular("q\"b\\s\x7f\t.txt", 2, kBlobB), lfs("a.bin", 7, kBlobC),  // LFS without xet_hash
  };
  EXPECT_EQ(serialize_tree_cache(files),
            R"({
 "format_version": 1,
 "files": {
  "a.bin": {
   "size": 7,
   "blob_id": "a9993e364706816aba3e25717850c26c9cd0d89d",
   "lfs_sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
   "lfs_size": 7
  },
  "q\"b\\s\u007f\t.txt": {
   "size": 2,
   "blob_id": "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
  },
  "\ud83d\ude00.bin": {
   "size": 1,
   "blob_id": "ce013625030ba8dba906f756967f9e9ca394464a"
  }
 }
})");
}

TEST(SerializeTreeCache, EndsWithoutANewline) {
  EXPECT_NE(serialize_tree_cache({regular("a", 1, kBlobA)}).back(), '\n');
}

TEST(ReadTreeCache, RoundTripsWhatSerializeWrote) {
  const TempDir dir;
  const std::vector<RemoteFile> files = {
      regular("config.json", 6, kBlobA),
      lfs("sub/dir/model.safetensors", 5'000'000'000, kBlobC, kXet),
      regular("\xC3\xBC.txt", 3, kBlobB),
      lfs("z.bin", 9, kBlobB),
  };
  write_file(dir / "c.json", serialize_tree_cache(files));
  const std::optional<std::vector<RemoteFile>> read = read_tree_cache(dir / "c.json");
  ASSERT_TRUE(read);
  ASSERT_EQ(read->size(), files.size());
  for (const RemoteFile& expected : files) {
    SCOPED_TRACE(expected.path);
    const auto it =
        std::find_if(read->begin(), read->end(), [&](const RemoteFile& f) { return f.path == expected.path; });
    ASSERT_NE(it, read->end());
    EXPECT_EQ(it->size, expected.size);
    EXPECT_EQ(it->blob_id, expected.blob_id);
    EXPECT_EQ(it->lfs_sha256, expected.lfs_sha256);
    EXPECT_EQ(it->lfs_size, expected.lfs_size);
    EXPECT_EQ(it->xet_hash, expected.xet_hash);
  }
  EXPECT_EQ(serialize_tree_cache(*read), serialize_tree_cache(files));
}

TEST(ReadTreeCache, ReadsAnEmptyListing) {
  const TempDir dir;
  write_file(dir / "c.json", serialize_tree_cache({}));
  const std::optional<std::vector<RemoteFile>> read = read_tree_cache(dir / "c.json");
  ASSERT_TRUE(read);
  EXPECT_TRUE(read->empty());
}

TEST(ReadTreeCache, IsNulloptForAMissingFile) {
  const TempDir dir;
  EXPECT_EQ(read_tree_cache(dir / "missing.json"), std::nullopt);
}

TEST(ReadTreeCache, IsNulloptForAnUnknownFormatOrBadContent) {
  const TempDir dir;
  for (const char* content : {
           R"({"format_version": 2, "files": {}})",
           R"({"files": {}})",
           R"({"format_version": 1})",
           R"({"format_version": 1, "files": []})",
           R"({"format_version": 1, "files": {"a": {"blob_id": "x"}}})",
           R"({"format_version": 1, "files": {"a": {"size": -1, "blob_id": "x"}}})",
           R"({"format_version": 1, "files": {"a": {"size": 1}}})",
           R"({"format_version": 1, "files": {"a": 5}})",
           "[]",
           "{",
           "",
       }) {
    write_file(dir / "c.json", content);
    EXPECT_EQ(read_tree_cache(dir / "c.json"), std::nullopt) << content;
  }
}

TEST(ReadTreeCache, IsNulloptForFieldsOfTheWrongType) {
  const TempDir dir;
  for (const char* content : {
           R"({"format_version": "1", "files": {}})",
           R"({"format_version": 1, "files": {"a": {"size": 1, "blob_id": "x", "lfs_sha256": "y", "lfs_size": "1"}}})",
       }) {
    write_file(dir / "c.json", content);
    std::optional<std::vector<RemoteFile>> read;
    EXPECT_NO_THROW(read = read_tree_cache(dir / "c.json")) << content;
    EXPECT_EQ(read, std::nullopt) << content;
  }
}

}  // namespace
}  // namespace hfget::store
