// SPDX-License-Identifier: MIT
#include "verify/shard_index.hpp"

#include <charconv>
#include <nlohmann/json.hpp>

namespace hfget::verify {
namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::optional<unsigned> parse_digits(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

bool is_shard_index_name(std::string_view file_name) {
  return ends_with(file_name, ".safetensors.index.json") || ends_with(file_name, ".bin.index.json");
}

ShardIndexParse parse_shard_index(std::string_view json_text) {
  const nlohmann::json data = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (data.is_discarded() || !data.is_object()) return {std::nullopt, "the index is not a valid JSON object"};
  const auto weight_map = data.find("weight_map");
  if (weight_map == data.end() || !weight_map->is_object()) return {std::nullopt, "the index has no weight_map"};
  ShardIndex index;
  for (const auto& [tensor, shard] : weight_map->items()) {
    if (!shard.is_string()) return {std::nullopt, "weight_map entry '" + tensor + "' is not a file name"};
    index.weight_map.emplace(tensor, shard.get<std::string>());
  }
  const auto metadata = data.find("metadata");
  if (metadata != data.end() && metadata->is_object()) {
    const auto total = metadata->find("total_size");
    if (total != metadata->end() && total->is_number_unsigned()) index.total_size = total->get<std::uint64_t>();
    // Some writers store it as a float (e.g. 372864.0).
    if (total != metadata->end() && total->is_number_float() && total->get<double>() >= 0 &&
        total->get<double>() < 9.0e18) {
      index.total_size = static_cast<std::uint64_t>(total->get<double>());
    }
  }
  return {std::move(index), {}};
}

std::optional<ShardName> parse_shard_name(std::string_view file_name) {
  const std::size_t dot =
      file_name.find('.', file_name.rfind("-of-") == std::string_view::npos ? 0 : file_name.rfind("-of-"));
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view base = file_name.substr(0, dot);
  const std::string_view extension = file_name.substr(dot);
  const std::size_t of = base.rfind("-of-");
  if (of == std::string_view::npos) return std::nullopt;
  const std::size_t dash = base.rfind('-', of - 1);
  if (of == 0 || dash == std::string_view::npos) return std::nullopt;
  const std::optional<unsigned> number = parse_digits(base.substr(dash + 1, of - dash - 1));
  const std::optional<unsigned> count = parse_digits(base.substr(of + 4));
  if (!number || !count || *count == 0) return std::nullopt;
  return ShardName{std::string(base.substr(0, dash)), *number, *count, std::string(extension)};
}

}  // namespace hfget::verify
