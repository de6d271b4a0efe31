// SPDX-License-Identifier: MIT
// --version is what a bug report from another machine starts with: it must name the libraries found at run time.
#include "cli/version.hpp"

#include <gtest/gtest.h>

namespace hfget::cli {
namespace {

TEST(Version, NamesTheBuildAndTheLibrariesInUse) {
  const VersionInfo info = version_info();
  EXPECT_FALSE(info.version.empty());
  EXPECT_FALSE(info.commit.empty());
  EXPECT_FALSE(info.libcurl.empty());
  EXPECT_EQ(info.curl_ssl.rfind("OpenSSL/", 0), 0u) << info.curl_ssl;
  EXPECT_EQ(info.openssl.rfind("OpenSSL 3", 0), 0u) << info.openssl;
}

TEST(Version, TheFirstLineIsHfgetAndTheVersionAlone) {
  const std::string text = version_text({"1.2.3", "abc1234", "8.5.0", "OpenSSL/3.0.13", "OpenSSL 3.0.13", "2.39"});
  EXPECT_EQ(text, "hfget 1.2.3\ncommit abc1234\nlibcurl 8.5.0 (OpenSSL/3.0.13)\nOpenSSL 3.0.13\nglibc 2.39");
}

}  // namespace
}  // namespace hfget::cli
