// SPDX-License-Identifier: MIT
#include "util/read_text_file.hpp"

#include <fstream>
#include <sstream>

namespace hfget::util {

std::optional<std::string> read_text_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size > max_bytes) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace hfget::util
