// SPDX-License-Identifier: MIT
// One owner per libcurl handle. Stateless deleters keep each pointer one word wide.
#pragma once

#include <curl/curl.h>

#include <memory>
#include <string>

#include "hfget/error.hpp"

namespace hfget::http {

struct EasyDeleter {
  void operator()(CURL* handle) const noexcept { curl_easy_cleanup(handle); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const noexcept { curl_slist_free_all(list); }
};
struct UrlDeleter {
  void operator()(CURLU* url) const noexcept { curl_url_cleanup(url); }
};

using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;
using UrlHandle = std::unique_ptr<CURLU, UrlDeleter>;

/// curl_slist_append returns the new head, or nullptr and leaves the old list intact.
class HeaderList {
 public:
  void append(const std::string& line) {
    curl_slist* head = curl_slist_append(head_.get(), line.c_str());
    if (head == nullptr) throw Error(ErrorCode::kInternal, "out of memory building HTTP headers");
    static_cast<void>(head_.release());
    head_.reset(head);
  }
  curl_slist* get() const noexcept { return head_.get(); }

 private:
  std::unique_ptr<curl_slist, SlistDeleter> head_;
};

}  // namespace hfget::http
