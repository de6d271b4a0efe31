// SPDX-License-Identifier: MIT
#include "http/transport.hpp"

namespace hfget::http {

const std::string* HttpResponse::header(const std::string& lowercase_name) const {
  const auto it = headers.find(lowercase_name);
  return it == headers.end() ? nullptr : &it->second;
}

bool StringSink::on_body(std::span<const std::byte> bytes) {
  if (text_.size() + bytes.size() > max_bytes_) {
    overflowed_ = true;
    return false;
  }
  text_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace hfget::http
