// SPDX-License-Identifier: MIT
#include "crypto/content_hasher.hpp"

#include <gtest/gtest.h>

#include <string_view>

namespace hfget::crypto {
namespace {

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

TEST(ContentHasher, HashesARegularFileAsAGitBlob) {
  RemoteFile file;
  file.size = 6;
  file.blob_id = "ce013625030ba8dba906f756967f9e9ca394464a";
  ContentHasher hasher(file);
  EXPECT_STREQ(hasher.algorithm(), "git-sha1");
  EXPECT_EQ(hasher.expected(), file.blob_id);
  hasher.update(bytes_of("hel"));
  hasher.update(bytes_of("lo\n"));
  EXPECT_EQ(hasher.finish_hex(), hasher.expected());
}

TEST(ContentHasher, HashesAnLfsFileWithSha256OfTheContent) {
  RemoteFile file;
  file.size = 3;
  file.blob_id = "ce013625030ba8dba906f756967f9e9ca394464a";  // the pointer's sha1: not what is checked
  file.lfs_sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  file.lfs_size = 3;
  ContentHasher hasher(file);
  EXPECT_STREQ(hasher.algorithm(), "sha256");
  EXPECT_EQ(hasher.expected(), *file.lfs_sha256);
  hasher.update(bytes_of("abc"));
  EXPECT_EQ(hasher.finish_hex(), hasher.expected());
}

TEST(ContentHasher, DetectsAFlippedByte) {
  RemoteFile file;
  file.size = 6;
  file.blob_id = "ce013625030ba8dba906f756967f9e9ca394464a";
  ContentHasher hasher(file);
  hasher.update(bytes_of("hellp\n"));
  EXPECT_NE(hasher.finish_hex(), hasher.expected());
}

}  // namespace
}  // namespace hfget::crypto
