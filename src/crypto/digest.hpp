// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace hfget::crypto {

/// A streaming message digest (OpenSSL EVP). Feed bytes in any number of pieces, then read the hex digest once.
class Digest {
 public:
  static Digest sha256();
  static Digest sha1();

  void update(std::span<const std::byte> bytes);
  /// Lowercase hex; the digest cannot be updated afterwards.
  std::string finish_hex();

 private:
  struct ContextDeleter {
    void operator()(void* context) const noexcept;
  };
  explicit Digest(const void* algorithm);
  std::unique_ptr<void, ContextDeleter> context_;  // an EVP_MD_CTX; void keeps <openssl/> out of this header
};

/// Git's blob object id: SHA-1 over "blob <size>\0" followed by the content. The Hub's tree listing gives it
/// as `oid` for regular (non-LFS) files, so it is how those files are verified.
class GitBlobSha1 {
 public:
  explicit GitBlobSha1(std::uint64_t content_size);
  void update(std::span<const std::byte> bytes) { digest_.update(bytes); }
  std::string finish_hex() { return digest_.finish_hex(); }

 private:
  Digest digest_;
};

}  // namespace hfget::crypto
