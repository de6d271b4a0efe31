// SPDX-License-Identifier: MIT
#pragma once

#include <span>
#include <string>
#include <variant>

#include "crypto/digest.hpp"
#include "hfget/repo.hpp"

namespace hfget::crypto {

/// The hash the listing promises for a file: SHA-256 of the content for LFS files (lfs.oid), the git blob
/// SHA-1 for regular files (oid). Fed while the bytes stream in, so verification needs no second read.
class ContentHasher {
 public:
  explicit ContentHasher(const RemoteFile& file)
      : state_(file.is_lfs() ? State(Digest::sha256()) : State(GitBlobSha1(file.size))), expected_(file.etag()) {}

  void update(std::span<const std::byte> bytes) {
    std::visit([&](auto& digest) { digest.update(bytes); }, state_);
  }
  std::string finish_hex() {
    return std::visit([](auto& digest) { return digest.finish_hex(); }, state_);
  }
  const std::string& expected() const noexcept { return expected_; }
  const char* algorithm() const noexcept { return std::holds_alternative<Digest>(state_) ? "sha256" : "git-sha1"; }

 private:
  using State = std::variant<Digest, GitBlobSha1>;
  State state_;
  std::string expected_;
};

}  // namespace hfget::crypto
