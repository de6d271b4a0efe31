// SPDX-License-Identifier: MIT
// Byte-compatible with Python's json.dump(data, f, indent=1): one space per level, ", " never used between
// items (newlines instead), ": " between key and value, non-ASCII escaped as \uXXXX (surrogate pairs above
// the BMP), no trailing newline.
#include "store/tree_cache.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "store/json_record.hpp"
#include "store/repo_path.hpp"

namespace hfget::store {
namespace {

void append_escaped_code_point(std::string& out, std::uint32_t code_point) {
  if (code_point >= 0x10000) {
    const std::uint32_t v = code_point - 0x10000;
    out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
  } else {
    out += fmt::format("\\u{:04x}", code_point);
  }
}

// Python's ensure_ascii encoder: '"' and '\\' escaped, \n \r \t \b \f by name, anything else outside
// ' '..'~' as \uXXXX. Input is UTF-8 that nlohmann already validated.
std::string python_json_string(const std::string& text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      switch (byte) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (byte < 0x20 || byte == 0x7f) {
            append_escaped_code_point(out, byte);
          } else {
            out += static_cast<char>(byte);
          }
      }
      ++i;
      continue;
    }
    const std::size_t length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2;
    std::uint32_t code_point = byte & (length == 4 ? 0x07U : length == 3 ? 0x0FU : 0x1FU);
    for (std::size_t k = 1; k < length && i + k < text.size(); ++k) {
      code_point = (code_point << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3FU);
    }
    append_escaped_code_point(out, code_point);
    i += length;
  }
  out += '"';
  return out;
}

bool is_lower_hex(const std::string& text, std::size_t length) {
  return text.size() == length && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

std::string serialize_tree_cache(const std::vector<RemoteFile>& files) {
  std::vector<const RemoteFile*> sorted;
  sorted.reserve(files.size());
  for (const RemoteFile& file : files) sorted.push_back(&file);
  // Python sorts str by code point; for UTF-8 bytes, byte order is the same order.
  std::sort(sorted.begin(), sorted.end(), [](const RemoteFile* a, const RemoteFile* b) { return a->path < b->path; });

  std::string out = "{\n \"format_version\": 1,\n \"files\": {";
  if (sorted.empty()) {
    out += "}\n}";
    return out;
  }
  bool first = true;
  for (const RemoteFile* file : sorted) {
    out += first ? "\n" : ",\n";
    first = false;
    out += "  " + python_json_string(file->path) + ": {\n";
    // Hashes are hex (checked when read), escaped all the same: the output must be valid JSON whatever it holds.
    out += fmt::format("   \"size\": {},\n   \"blob_id\": {}", file->size, python_json_string(file->blob_id));
    if (file->lfs_sha256) {
      out += fmt::format(",\n   \"lfs_sha256\": {},\n   \"lfs_size\": {}", python_json_string(*file->lfs_sha256),
                         file->lfs_size.value_or(file->size));
    }
    if (file->xet_hash) out += fmt::format(",\n   \"xet_hash\": {}", python_json_string(*file->xet_hash));
    out += "\n  }";
  }
  out += "\n }\n}";
  return out;
}

std::optional<std::vector<RemoteFile>> read_tree_cache(const std::filesystem::path& path) {
  const std::optional<nlohmann::json> record = read_json_record(path, 1);
  if (!record) return std::nullopt;
  const nlohmann::json& data = *record;
  const auto files = data.find("files");
  if (files == data.end() || !files->is_object()) return std::nullopt;
  std::vector<RemoteFile> result;
  for (const auto& [file_path, info] : files->items()) {
    if (!info.is_object() || !info.contains("size") || !info["size"].is_number_unsigned() ||
        !info.contains("blob_id") || !info["blob_id"].is_string()) {
      return std::nullopt;
    }
    // Paths and hashes become file names: a hand-edited or damaged file is ignored, as the Python client ignores
    // one with a malformed xet_hash.
    if (unsafe_path_reason(file_path) || !is_lower_hex(info["blob_id"].get<std::string>(), 40)) return std::nullopt;
    RemoteFile file;
    file.path = file_path;
    file.size = info["size"].get<std::uint64_t>();
    file.blob_id = info["blob_id"].get<std::string>();
    // A field of the wrong type means a damaged file: ignore all of it, as the Python client does.
    if (info.contains("lfs_sha256")) {
      if (!info["lfs_sha256"].is_string() || !info.contains("lfs_size") || !info["lfs_size"].is_number_unsigned()) {
        return std::nullopt;
      }
      file.lfs_sha256 = info["lfs_sha256"].get<std::string>();
      if (!is_lower_hex(*file.lfs_sha256, 64)) return std::nullopt;
      file.lfs_size = info["lfs_size"].get<std::uint64_t>();
    }
    if (info.contains("xet_hash")) {
      if (!info["xet_hash"].is_string()) return std::nullopt;
      file.xet_hash = info["xet_hash"].get<std::string>();
      if (!is_lower_hex(*file.xet_hash, 64)) return std::nullopt;
    }
    result.push_back(std::move(file));
  }
  return result;
}

}  // namespace hfget::store
