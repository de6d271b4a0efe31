// SPDX-License-Identifier: MIT
#include "store/json_record.hpp"

#include "util/read_text_file.hpp"

namespace hfget::store {

std::optional<nlohmann::json> read_json_record(const std::filesystem::path& path, int version) {
  constexpr std::uint64_t kMaxRecordBytes = 256 << 20;  // a listing of a million files is ~150 MB
  const std::optional<std::string> content = util::read_text_file(path, kMaxRecordBytes);
  if (!content) return std::nullopt;
  nlohmann::json data = nlohmann::json::parse(*content, nullptr, /*allow_exceptions=*/false);
  if (data.is_discarded() || !data.is_object()) return std::nullopt;
  const auto found = data.find("format_version");
  if (found == data.end() || !found->is_number_integer() || found->get<std::int64_t>() != version) return std::nullopt;
  return data;
}

}  // namespace hfget::store
