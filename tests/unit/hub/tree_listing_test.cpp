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
  for (const char* body : {R"({"error": "Repository not found"})", R"("[]")", "null", "5", "{}"}) {
    EXPECT_NE(malformed_message(body).find("the body is not a JSON array"), std::string::npos) << body;
  }
}

TEST(ParseTreePage, RejectsAnEntryThatIsNotAnObject) {
  for (const std::string& body : {std::string("[7]"), std::string(R"(["a"])"), std::string("[null]"),
                                  "[[" + file_entry("a", "1") + "]]", "[" + file_entry("a", "1") + ", []]"}) {
    EXPECT_NE(malformed_message(body).find("an entry is not an object"), std::string::npos) << body;
  }
}

// Hostile bodies (security issue 14): what the parser does not use costs no memory and linear time.

// One parse of `body`, which must succeed with one file. (That it takes linear time is guarded where time can be
// measured: the fuzz replay's timeout in scripts/fuzz and tests/integration/test_hostile_json.py.)
void expect_one_file(const std::string& body) {
  const std::vector<RemoteFile> files = parse_tree_page(body);
  EXPECT_EQ(files.size(), 1U);
  if (!files.empty()) {
    EXPECT_EQ(files[0].path, "a.bin");
  }
}

std::string repeated(const std::string& unit, std::size_t count, const std::string& separator = ",") {
  std::string text;
  text.reserve((unit.size() + separator.size()) * count);
  for (std::size_t i = 0; i < count; ++i) text += (i == 0 ? "" : separator) + unit;
  return text;
}

TEST(ParseTreePage, SkipsAMillionEmptyObjectsInAnUnusedField) {
  // The callback parser this replaced rescanned the parent after every object: > 60 s for this page.
  const std::string junk = "[" + repeated("{}", 1'000'000) + "]";
  const std::string body =
      R"([{"type": "file", "path": "a.bin", "size": 1, "junk": )" + junk + R"(, "oid": ")" + kOid + R"("}])";
  expect_one_file(body);
  // The same objects as a field of a directory entry, and in lfs, are skipped alike.
  const std::string directory = R"({"type": "directory", "path": "d", "oid": ")" + kOid + R"(", "x": )" + junk + "}";
  expect_one_file("[" + directory + ", " + file_entry("a.bin", "1") + "]");
}

TEST(ParseTreePage, SkipsHugeValuesInUnusedFields) {
  const std::string big(8 << 20, 'x');
  expect_one_file(R"([{"type": "file", "path": "a.bin", "size": 1, "note": ")" + big + R"(", "numbers": [)" +
                  repeated("1", 1'000'000) + R"(], "oid": ")" + kOid + R"("}])");
}

TEST(ParseTreePage, RefusesDeepNestingAtOnce) {
  // (An array where an entry belongs is refused as such before its nesting matters: [[[[… is "an entry is
  // not an object".)
  for (const std::string& body :
       {R"([{"x": )" + std::string(10'000'000, '['), "[" + repeated(R"({"a": )", 100'000, ""),
        R"([{"type": "file", "path": "a", "size": 1, "x": )" + std::string(100, '[') + std::string(100, ']') + "}]"}) {
    EXPECT_NE(malformed_message(body).find("nested too deeply"), std::string::npos) << body.substr(0, 40);
  }
  // Nesting that real pages could have is fine: the top array, an entry, lfs, and four more levels.
  EXPECT_EQ(parse_tree_page(R"([{"type": "file", "path": "a", "size": 1, "oid": ")" + kOid + R"(", "x": [[[[[]]]]]}])")
                .size(),
            1U);
}

TEST(ParseTreePage, ClipsAHugePathInItsMessage) {
  const std::string path(1 << 20, 'p');
  const std::string message = malformed_message("[" + file_entry(path, "-1") + "]");
  EXPECT_LT(message.size(), 5000U);
  EXPECT_NE(message.find("(1048576 bytes)"), std::string::npos) << message.substr(0, 200);
}

TEST(ParseTreePage, ReadsTheLastOfARepeatedField) {
  const std::vector<RemoteFile> files =
      parse_tree_page(R"([{"type": "directory", "path": "x", "type": "file", "path": "a", "size": "no", "size": 3,)"
                      R"( "lfs": "bad", "lfs": null, "oid": ")" +
                      kOid + R"("}])");
  ASSERT_EQ(files.size(), 1U);
  EXPECT_EQ(files[0].path, "a");
  EXPECT_EQ(files[0].size, 3U);
  EXPECT_FALSE(files[0].is_lfs());
}

TEST(ParseTreePage, ReadsOnlyTheFieldsOfTheEntryItself) {
  // Keys named like the entry's fields, one level down, are not the entry's.
  const std::vector<RemoteFile> files = parse_tree_page(R"([{"type": "file", "path": "a", "size": 1, "oid": ")" + kOid +
                                                        R"(", "extra": {"lfs": {"oid": ")" + kSha +
                                                        R"(", "size": 1}, "path": "b", "type": "directory"}}])");
  ASSERT_EQ(files.size(), 1U);
  EXPECT_EQ(files[0].path, "a");
  EXPECT_FALSE(files[0].is_lfs());
  malformed_message(R"([{"type": "file", "path": "a", "size": 1, "oid": ")" + kOid + R"(", "lfs": {"x": {"oid": ")" +
                    kSha + R"("}, "size": 1}}])");  // lfs.oid one level too deep: lfs has none
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

TEST(ParseCommitFromRevisionInfo, ReadsOnlyTheTopLevelSha) {
  EXPECT_EQ(parse_commit_from_revision_info(R"({"sha": "main", "cardData": {"sha": "x"}, "sha": ")" + kOid + R"("})"),
            kOid);
  EXPECT_THROW(parse_commit_from_revision_info(R"({"siblings": [{"sha": ")" + kOid + R"("}]})"), Error);
}

TEST(ParseCommitFromRevisionInfo, SkipsWhatItDoesNotUse) {
  const std::string junk = "[" + repeated("{}", 1'000'000) + "]";
  EXPECT_EQ(parse_commit_from_revision_info(R"({"siblings": )" + junk + R"(, "sha": ")" + kOid + R"(", "card": ")" +
                                            std::string(8 << 20, 'c') + R"("})"),
            kOid);
}

TEST(ParseCommitFromRevisionInfo, RefusesDeepNestingAtOnce) {
  // 31 M nested [] once cost 2.27 GB; the parse now stops at the 65th level.
  const std::string body = R"({"sha": ")" + kOid + R"(", "x": )" + std::string(31'000'000, '[');
  try {
    (void)parse_commit_from_revision_info(body);
    ADD_FAILURE() << "accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kNetwork);
    EXPECT_NE(std::string(error.what()).find("nested more than 64 levels deep"), std::string::npos) << error.what();
  }
  const std::string deep_but_fine =
      std::string(R"({"a": )") + std::string(60, '[') + std::string(60, ']') + R"(, "sha": ")" + kOid + R"("})";
  EXPECT_EQ(parse_commit_from_revision_info(deep_but_fine), kOid);
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
TEST(ParseRevisionInfo, ReadsWhetherTheRepoIsGated) {
  const auto gated = [](const std::string& value) {
    return parse_revision_info(R"({"sha": ")" + kOid + R"(", "gated": )" + value + "}").gated;
  };
  EXPECT_FALSE(gated("false"));
  EXPECT_FALSE(gated("null"));
  EXPECT_FALSE(gated(R"("")"));
  EXPECT_TRUE(gated(R"("manual")"));
  EXPECT_TRUE(gated(R"("auto")"));
  EXPECT_TRUE(gated("true"));
  EXPECT_FALSE(parse_revision_info(R"({"sha": ")" + kOid + R"("})").gated);
  // Only the repo's own field counts, not one in the model card.
  EXPECT_FALSE(parse_revision_info(R"({"cardData": {"gated": "manual"}, "sha": ")" + kOid + R"("})").gated);
  EXPECT_EQ(parse_revision_info(R"({"gated": "manual", "sha": ")" + kOid + R"("})").commit, kOid);
}

}  // namespace hfget::hub
