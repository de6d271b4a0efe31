// SPDX-License-Identifier: MIT
// The tree endpoint is the source of truth for what a download must produce: every size and hash hfget
// checks comes from here, so each field is validated before it becomes an expectation.
#include "hub/tree_listing.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "hfget/error.hpp"

namespace hfget::hub {
namespace {

using nlohmann::json;

// Sizes above this are refused: no Hub file is a petabyte, and it keeps arithmetic far from overflow.
constexpr std::uint64_t kMaxFileSize = std::uint64_t{1} << 50;

bool is_lower_hex(const std::string& text, std::size_t length) {
  if (text.size() != length) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

[[noreturn]] void malformed(const std::string& what) {
  throw Error(ErrorCode::kNetwork, "the Hub sent a malformed tree listing: " + what);
}

std::uint64_t read_size(const json& object, const char* key, const std::string& path) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_unsigned()) {
    malformed(fmt::format("'{}' of '{}' is not a non-negative integer", key, path));
  }
  const auto size = it->get<std::uint64_t>();
  if (size > kMaxFileSize) malformed(fmt::format("'{}' of '{}' is absurdly large ({})", key, path, size));
  return size;
}

RemoteFile parse_file_entry(const json& entry) {
  const auto path_it = entry.find("path");
  if (path_it == entry.end() || !path_it->is_string()) malformed("a file entry has no path");
  RemoteFile file;
  file.path = path_it->get<std::string>();
  file.size = read_size(entry, "size", file.path);

  const auto oid = entry.find("oid");
  if (oid == entry.end() || !oid->is_string() || !is_lower_hex(oid->get<std::string>(), 40)) {
    malformed(fmt::format("'oid' of '{}' is not a 40-hex git object id", file.path));
  }
  file.blob_id = oid->get<std::string>();

  const auto lfs = entry.find("lfs");
  if (lfs != entry.end() && !lfs->is_null()) {
    if (!lfs->is_object()) malformed(fmt::format("'lfs' of '{}' is not an object", file.path));
    const auto sha = lfs->find("oid");
    if (sha == lfs->end() || !sha->is_string() || !is_lower_hex(sha->get<std::string>(), 64)) {
      malformed(fmt::format("'lfs.oid' of '{}' is not a 64-hex sha256", file.path));
    }
    file.lfs_sha256 = sha->get<std::string>();
    file.lfs_size = read_size(*lfs, "size", file.path);
    if (*file.lfs_size != file.size) {
      malformed(fmt::format("'{}' has size {} but lfs.size {}", file.path, file.size, *file.lfs_size));
    }
  }
  const auto xet = entry.find("xetHash");
  if (xet != entry.end() && xet->is_string() && is_lower_hex(xet->get<std::string>(), 64)) {
    file.xet_hash = xet->get<std::string>();
  }
  return file;
}

}  // namespace

std::vector<RemoteFile> parse_tree_page(const std::string& json_text) {
  // Parsed entry by entry: each object of the top-level array is turned into a RemoteFile as soon as it is
  // complete and then dropped, so memory follows the files listed, never the size or shape of the body (a
  // hostile page of 60 MB of numbers or ten million nested brackets costs nothing to refuse).
  constexpr int kMaxDepth = 6;
  std::vector<RemoteFile> files;
  const json::parser_callback_t on_event = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth > kMaxDepth) malformed("the body is nested too deeply");
        return true;
      case json::parse_event_t::value:
        if (depth == 1) malformed("an entry is not an object");
        return true;
      case json::parse_event_t::array_end:
        if (depth == 1) malformed("an entry is not an object");
        return true;
      case json::parse_event_t::object_end: {
        if (depth != 1) return depth > 0;  // depth 0: the top level is an object, refused below
        const auto type = parsed.find("type");
        if (type == parsed.end() || !type->is_string()) malformed("an entry has no type");
        // Directories (and anything newer) carry no bytes to fetch.
        if (*type == "file") files.push_back(parse_file_entry(parsed));
        return false;  // drop the entry: it is in `files` now
      }
      case json::parse_event_t::key: return true;
    }
    return true;
  };
  const json page = json::parse(json_text, on_event, /*allow_exceptions=*/false);
  if (page.is_discarded()) malformed("the body is not valid JSON");
  if (!page.is_array()) malformed("the body is not a JSON array");
  return files;
}

std::string parse_commit_from_revision_info(const std::string& json_text) {
  const json info = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (info.is_discarded() || !info.is_object()) {
    throw Error(ErrorCode::kNetwork, "the Hub sent malformed repo info: not a JSON object");
  }
  const auto sha = info.find("sha");
  if (sha == info.end() || !sha->is_string() || !is_lower_hex(sha->get<std::string>(), 40)) {
    throw Error(ErrorCode::kNetwork, "the Hub sent malformed repo info: 'sha' is not a 40-hex commit id");
  }
  return sha->get<std::string>();
}

}  // namespace hfget::hub
