// SPDX-License-Identifier: MIT
#include "util/read_text_file.hpp"

#include <array>
#include <fstream>

namespace hfget::util {

std::optional<std::string> read_text_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size > max_bytes) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  // Read with the bound too: a file can grow after its size was read, and some report a size they do not
  // hold (/proc's, a named pipe behind a symbolic link).
  std::string content;
  std::array<char, 16 << 10> buffer;
  while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0) {
    content.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (content.size() > max_bytes) return std::nullopt;
  }
  return content;
}

}  // namespace hfget::util
