// SPDX-License-Identifier: MIT
#include "crypto/digest.hpp"

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <string_view>

namespace hfget::crypto {
namespace {

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

std::string sha256_hex(std::string_view text) {
  Digest digest = Digest::sha256();
  digest.update(bytes_of(text));
  return digest.finish_hex();
}

TEST(Digest, Sha256OfEmptyInputIsTheKnownVector) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Digest, Sha256OfAbcIsTheKnownVector) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Digest, Sha1OfAbcIsTheKnownVector) {
  Digest digest = Digest::sha1();
  digest.update(bytes_of("abc"));
  EXPECT_EQ(digest.finish_hex(), "a9993e364706816aba3e25717850c26c9cd0d89d");
}

TEST(Digest, StreamingInPiecesEqualsOneShot) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "The quick brown fox jumps over the lazy dog. ";
  Digest pieces = Digest::sha256();
  const std::string_view view = text;
  for (std::size_t offset = 0; offset < view.size(); offset += 7) pieces.update(bytes_of(view.substr(offset, 7)));
  pieces.update({});  // an empty piece changes nothing
  EXPECT_EQ(pieces.finish_hex(), sha256_hex(text));
}

TEST(GitBlobSha1, MatchesGitHashObject) {
  // `printf 'hello\n' | git hash-object --stdin`
  GitBlobSha1 blob(6);
  blob.update(bytes_of("hello\n"));
  EXPECT_EQ(blob.finish_hex(), "ce013625030ba8dba906f756967f9e9ca394464a");
}

TEST(GitBlobSha1, OfEmptyContentIsGitsEmptyBlob) {
  GitBlobSha1 blob(0);
  EXPECT_EQ(blob.finish_hex(), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
}

TEST(GitBlobSha1, StreamingInPiecesEqualsOneShot) {
  GitBlobSha1 one_shot(6);
  one_shot.update(bytes_of("hello\n"));
  GitBlobSha1 pieces(6);
  pieces.update(bytes_of("he"));
  pieces.update(bytes_of("l"));
  pieces.update(bytes_of("lo\n"));
  EXPECT_EQ(pieces.finish_hex(), one_shot.finish_hex());
}

}  // namespace
}  // namespace hfget::crypto
