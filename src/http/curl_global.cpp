// SPDX-License-Identifier: MIT
#include <curl/curl.h>

#include <string>

#include "hfget/error.hpp"
#include "hfget/library.hpp"

namespace hfget {

LibraryInit::LibraryInit() {
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    throw Error(ErrorCode::kInternal, "libcurl global initialisation failed");
  }
}

LibraryInit::~LibraryInit() {
  curl_global_cleanup();
}

const char* version_string() {
  static const std::string version = std::string("hfget/0.1.0 (") + curl_version() + ")";
  return version.c_str();
}

}  // namespace hfget
