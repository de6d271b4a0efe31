// SPDX-License-Identifier: MIT
#include "crypto/digest.hpp"

#include <openssl/evp.h>

#include <array>
#include <string_view>

#include "hfget/error.hpp"

namespace hfget::crypto {

void Digest::ContextDeleter::operator()(void* context) const noexcept {
  EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context));
}

Digest::Digest(const void* algorithm) : context_(EVP_MD_CTX_new()) {
  if (!context_) throw Error(ErrorCode::kInternal, "out of memory creating a digest context");
  if (EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(context_.get()), static_cast<const EVP_MD*>(algorithm), nullptr) !=
      1) {
    throw Error(ErrorCode::kInternal, "OpenSSL could not initialise a digest");
  }
}

Digest Digest::sha256() {
  return Digest(EVP_sha256());
}
Digest Digest::sha1() {
  return Digest(EVP_sha1());
}

void Digest::update(std::span<const std::byte> bytes) {
  if (bytes.empty()) return;
  if (EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_.get()), bytes.data(), bytes.size()) != 1) {
    throw Error(ErrorCode::kInternal, "OpenSSL digest update failed");
  }
}

std::string Digest::finish_hex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> raw{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_.get()), raw.data(), &length) != 1) {
    throw Error(ErrorCode::kInternal, "OpenSSL digest final failed");
  }
  static constexpr std::string_view kHex = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2U);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[raw[i] >> 4U];
    hex += kHex[raw[i] & 0x0FU];
  }
  return hex;
}

GitBlobSha1::GitBlobSha1(std::uint64_t content_size) : digest_(Digest::sha1()) {
  const std::string header = "blob " + std::to_string(content_size) + '\0';
  digest_.update(std::as_bytes(std::span(header.data(), header.size())));
}

}  // namespace hfget::crypto
