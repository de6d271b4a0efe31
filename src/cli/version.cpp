// SPDX-License-Identifier: MIT
// `hfget --version` answers the first question of every bug report from a machine that is not the build machine:
// which build is this, and which libcurl and OpenSSL did the dynamic linker hand it. The commit and the version come
// from the build (CMakeLists.txt defines them for this file only, so a new commit recompiles one file).
#include "cli/version.hpp"

#include <curl/curl.h>
#include <gnu/libc-version.h>
#include <openssl/crypto.h>

#ifndef HFGET_VERSION
#define HFGET_VERSION "unknown"
#endif
#ifndef HFGET_GIT_COMMIT
#define HFGET_GIT_COMMIT "unknown"
#endif

namespace hfget::cli {

VersionInfo version_info() {
  VersionInfo info;
  info.version = HFGET_VERSION;
  info.commit = HFGET_GIT_COMMIT;
  // Safe before curl_global_init: it only reads what libcurl was built with.
  if (const curl_version_info_data* curl = curl_version_info(CURLVERSION_NOW)) {
    info.libcurl = curl->version != nullptr ? curl->version : "unknown";
    info.curl_ssl = curl->ssl_version != nullptr ? curl->ssl_version : "none";
  }
  info.openssl = OpenSSL_version(OPENSSL_VERSION);
  info.glibc = gnu_get_libc_version();
  return info;
}

std::string version_text(const VersionInfo& info) {
  return "hfget " + info.version + "\ncommit " + info.commit + "\nlibcurl " + info.libcurl + " (" + info.curl_ssl +
         ")\n" + info.openssl + "\nglibc " + info.glibc;
}

}  // namespace hfget::cli
