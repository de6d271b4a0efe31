// SPDX-License-Identifier: MIT
// The two run records are small JSON objects that hfget writes and, as far as a reader can tell, anyone else
// may have: every read checks the shape before it believes a field.
#include "run/record_json.hpp"

#include <limits>
#include <string_view>

#include "util/read_text_file.hpp"
#include "util/utc_timestamp.hpp"

namespace hfget::run {
namespace {

constexpr std::uint64_t kLargestRecordBytes = 1 << 20;

// Counted on the text, before parsing: brackets inside strings do not count.
bool nested_deeper_than(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

}  // namespace

std::optional<nlohmann::json> read_record_object(const std::filesystem::path& path, int max_depth) {
  // A reader that opened the record just before a rewrite exchanged it may read the spare being overwritten:
  // a torn read does not parse, and the next read finds the new record.
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::optional<std::string> text = util::read_text_file(path, kLargestRecordBytes);
    if (!text) return std::nullopt;
    if (nested_deeper_than(*text, max_depth)) return std::nullopt;  // not torn: no retry makes it a record
    nlohmann::json data = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!data.is_discarded() && data.is_object()) return data;
  }
  return std::nullopt;
}

std::string record_text(const nlohmann::json& record, int indent) {
  return record.dump(indent, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace) + "\n";
}

std::optional<std::string> string_field(const nlohmann::json& record, const char* key) {
  const auto field = record.find(key);
  if (field == record.end() || !field->is_string()) return std::nullopt;
  return field->get<std::string>();
}

std::optional<std::uint64_t> count_field(const nlohmann::json& record, const char* key) {
  const auto field = record.find(key);
  if (field == record.end() || !field->is_number_unsigned()) return std::nullopt;
  return field->get<std::uint64_t>();
}

std::optional<double> number_field(const nlohmann::json& record, const char* key) {
  const auto field = record.find(key);
  if (field == record.end() || !field->is_number()) return std::nullopt;
  return field->get<double>();
}

std::optional<long> integer_field(const nlohmann::json& record, const char* key) {
  const auto field = record.find(key);
  if (field == record.end() || !field->is_number_integer()) return std::nullopt;
  if (field->is_number_unsigned()) {
    const std::uint64_t value = field->get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(std::numeric_limits<long>::max())) return std::nullopt;
    return static_cast<long>(value);
  }
  return field->get<long>();
}

std::optional<std::chrono::system_clock::time_point> started_at_of(const nlohmann::json& record) {
  const std::optional<std::string> started = string_field(record, "started_at");
  if (!started) return std::nullopt;
  return util::parse_utc_timestamp(*started);
}

}  // namespace hfget::run
