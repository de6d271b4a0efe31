// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace hfget::cli {

/// What the build and the running process say about this hfget: its version, the commit it was built from
/// (`git describe` when the build was configured, "unknown" outside a git checkout) and the libcurl and OpenSSL
/// it runs with, which on another machine are not the ones it was built against.
struct VersionInfo {
  std::string version;
  std::string commit;
  std::string libcurl;   // "8.5.0", from curl_version_info() at run time
  std::string curl_ssl;  // the TLS backend libcurl was built with, "OpenSSL/3.0.13"
  std::string openssl;   // OpenSSL_version(OPENSSL_VERSION) at run time
  std::string glibc;     // gnu_get_libc_version()
};

VersionInfo version_info();

/// The text of `hfget --version`: "hfget 0.1.0" on its first line (as scripts parse it), then one line each
/// for the commit, libcurl, OpenSSL and glibc.
std::string version_text(const VersionInfo& info);

}  // namespace hfget::cli
