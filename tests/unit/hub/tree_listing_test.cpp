// SPDX-License-Identifier: MIT
#include "hub/tree_listing.hpp"

#include <gtest/gtest.h>

#include <string>

#include "hfget/error.hpp"

namespace hfget::hub {
namespace {

const std::string kOid = "ce013625030ba8dba906f756967f9e9ca394464a";
const std::string kSha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const std::string kXet = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

std::string file_entry(const std::string& path, const std::string& size, const std::string& oid = kOid) {
  return R"({"type": "file", "path": ")" + path + R"(", "size": )" + size + R"(, "oid": ")" + oid + R"("})";
}

// Asserts that parsing throws Error{kNetwork}; returns its message.
std::string malformed_message(const std::string& json_text) {
  try {
    (void)parse_tree_page(json_text);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kNetwork) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "accepted: " << json_text;
  return "";
}

TEST(ParseTreePage, KeepsFilesAndSkipsDirectories) {
  const std::vector<RemoteFile> files =
      parse_tree_page("[" + file_entry("config.json", "6") + R"(, {"type": "directory", "path": "sub", "oid": ")" +
                      kOid + R"(", "size": 0}, )" + file_entry("sub/a.txt", "0") + "]");
  ASSERT_EQ(files.size(), 2U);
  EXPECT_EQ(files[0].path, "config.json");
  EXPECT_EQ(files[0].size, 6U);
  EXPECT_EQ(files[0].blob_id, kOid);
  EXPECT_FALSE(files[0].is_lfs());
  EXPECT_FALSE(files[0].lfs_size);
  EXPECT_FALSE(files[0].xet_hash);
  EXPECT_EQ(files[1].path, "sub/a.txt");
  EXPECT_EQ(files[1].size, 0U);
}

TEST(ParseTreePage, SkipsUnknownEntryTypes) {
  EXPECT_TRUE(parse_tree_page(R"([{"type": "submodule", "path": "x"}])").empty());
}

TEST(ParseTreePage, AcceptsAnEmptyPage) {
  EXPECT_TRUE(parse_tree_page("[]").empty());
}

TEST(ParseTreePage, ReadsLfsAndXetFields) {
  const std::vector<RemoteFile> files =
      parse_tree_page(R"([{"type": "file", "path": "model.safetensors", "size": 5000000000, "oid": ")" + kOid +
                      R"(", "lfs": {"oid": ")" + kSha + R"(", "size": 5000000000, "pointerSize": 135}, "xetHash": ")" +
                      kXet + R"("}])");
  ASSERT_EQ(files.size(), 1U);
  EXPECT_TRUE(files[0].is_lfs());
  EXPECT_EQ(files[0].size, 5'000'000'000U);
  EXPECT_EQ(files[0].lfs_sha256, kSha);
  EXPECT_EQ(files[0].lfs_size, 5'000'000'000U);
  EXPECT_EQ(files[0].xet_hash, kXet);
  EXPECT_EQ(files[0].etag(), kSha);
}

TEST(ParseTreePage, TreatsNullLfsAsARegularFile) {
  const std::vector<RemoteFile> files =
      parse_tree_page(R"([{"type": "file", "path": "a", "size": 1, "oid": ")" + kOid + R"(", "lfs": null}])");
  ASSERT_EQ(files.size(), 1U);
  EXPECT_FALSE(files[0].is_lfs());
}

TEST(ParseTreePage, IgnoresAMalformedXetHash) {
  const std::vector<RemoteFile> files =
      parse_tree_page(R"([{"type": "file", "path": "a", "size": 1, "oid": ")" + kOid + R"(", "xetHash": "not-hex"}])");
  ASSERT_EQ(files.size(), 1U);
  EXPECT_FALSE(files[0].xet_hash);
}

TEST(ParseTreePage, RejectsAMissingOid) {
  malformed_message(R"([{"type": "file", "path": "a", "size": 1}])");
}

TEST(ParseTreePage, RejectsAnOidThatIsNot40LowercaseHex) {
  for (const std::string& oid :
       {std::string("xyz"), std::string(39, 'a'), std::string(41, 'a'), std::string(40, 'g'), std::string(40, 'A')}) {
    EXPECT_NE(malformed_message("[" + file_entry("a", "1", oid) + "]").find("'a'"), std::string::npos) << oid;
  }
  malformed_message(R"([{"type": "file", "path": "a", "size": 1, "oid": 12}])");
}

TEST(ParseTreePage, RejectsASizeThatIsNotANonNegativeInteger) {
  for (const char* size : {"-1", "\"10\"", "1.5", "null", "true"}) {
    malformed_message("[" + file_entry("a", size) + "]");
  }
  malformed_message(R"([{"type": "file", "path": "a", "oid": ")" + kOid + R"("}])");
}

TEST(ParseTreePage, RejectsAnAbsurdlyLargeSize) {
  malformed_message("[" + file_entry("a", "18446744073709551615") + "]");
}

TEST(ParseTreePage, RejectsLfsSizeDifferentFromSize) {
  const std::string message = malformed_message(R"([{"type": "file", "path": "w.bin", "size": 10, "oid": ")" + kOid +
                                                R"(", "lfs": {"oid": ")" + kSha + R"(", "size": 11}}])");
  EXPECT_NE(message.find("w.bin"), std::string::npos) << message;
}

TEST(ParseTreePage, RejectsAMalformedLfsObject) {
  malformed_message(R"([{"type": "file", "path": "a", "size": 1, "oid": ")" + kOid + R"(", "lfs": "yes"}])");
  malformed_message(R"([{"type": "file", "path": "a", "size": 1, "oid": ")" + kOid + R"(", "lfs": {"size": 1}}])");
  malformed_message(R"([{"type": "file", "path": "a", "size": 1, "oid": ")" + kOid + R"(", "lfs": {"oid": ")" + kOid +
                    R"(", "size": 1}}])");  // a sha1 where a sha256 belongs
  malformed_message(R"([{"type": "file", "path": "a", "size": 1, "oid": ")" + kOid + R"(", "lfs": {"oid": ")" + kSha +
                    R"("}}])");
}

TEST(ParseTreePage, RejectsEntriesWithoutPathOrType) {
  malformed_message(R"([{"type": "file", "size": 1, "oid": ")" + kOid + R"("}])");
  malformed_message(R"([{"type": "file", "path": 5, "size": 1, "oid": ")" + kOid + R"("}])");
  malformed_message(R"([{"path": "a", "size": 1, "oid": ")" + kOid + R"("}])");
  malformed_message(R"([7])");
}

TEST(ParseTreePage, RejectsABodyThatIsNotAnArray) {
  malformed_message(R"({"error": "Repository not found"})");
  malformed_message(R"("[]")");
  malformed_message("null");
}

TEST(ParseTreePage, RejectsBadJson) {
  malformed_message("");
  malformed_message("[");
  malformed_message("<html>502 Bad Gateway</html>");
  malformed_message("[" + file_entry("a", "1") + ",]");
}

TEST(ParseCommitFromRevisionInfo, ReadsTheSha) {
  EXPECT_EQ(parse_commit_from_revision_info(R"({"id": "gpt2", "sha": ")" + kOid + R"(", "siblings": []})"), kOid);
}

TEST(ParseCommitFromRevisionInfo, RejectsAMissingOrMalformedSha) {
  for (const std::string& body :
       {std::string(R"({"id": "gpt2"})"), std::string(R"({"sha": null})"), std::string(R"({"sha": "main"})"),
        R"({"sha": ")" + std::string(40, 'A') + R"("})", R"({"sha": ")" + kSha + R"("})", std::string("[]"),
        std::string("not json"), std::string("")}) {
    try {
      (void)parse_commit_from_revision_info(body);
      ADD_FAILURE() << "accepted: " << body;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kNetwork) << body;
    }
  }
}

}  // namespace
}  // namespace hfget::hub
