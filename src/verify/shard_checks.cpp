// SPDX-License-Identifier: MIT
#include "verify/shard_checks.hpp"

#include <fmt/format.h>

#include <set>

#include "util/read_text_file.hpp"
#include "verify/shard_index.hpp"

namespace hfget::verify {
namespace {

constexpr std::uint64_t kMaxIndexBytes = 256 << 20;

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string folder_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

struct LoadedIndex {
  std::string path;  // repo path of the index file
  ShardIndex index;
};

std::vector<LoadedIndex> load_indexes(const std::filesystem::path& root, const Inventory& inventory,
                                      VerifyReport& report, const char* check) {
  std::vector<LoadedIndex> indexes;
  for (const ExpectedFile& file : inventory.expected) {
    if (!file.present || !is_shard_index_name(base_name(file.path))) continue;
    const std::optional<std::string> text = util::read_text_file(root / file.path, kMaxIndexBytes);
    ShardIndexParse parsed = text ? parse_shard_index(*text) : ShardIndexParse{std::nullopt, "cannot read the index"};
    if (!parsed.index) {
      if (check != nullptr) report.problems.push_back({file.path, check, parsed.problem});
      continue;
    }
    indexes.push_back({file.path, std::move(*parsed.index)});
  }
  return indexes;
}

}  // namespace

HeaderTable read_all_headers(const std::filesystem::path& root, const Inventory& inventory) {
  HeaderTable headers;
  for (const std::string& path : inventory.on_disk) {
    if (ends_with(path, ".safetensors")) headers.emplace(path, read_safetensors_header(root / path));
  }
  return headers;
}

CheckResult check_shard_sets(const std::filesystem::path& root, const Inventory& inventory, const HeaderTable& headers,
                             VerifyReport& report) {
  const std::size_t problems_before = report.problems.size();
  const std::vector<LoadedIndex> indexes = load_indexes(root, inventory, report, "shard_set");
  std::vector<std::string> summaries;
  for (const LoadedIndex& loaded : indexes) {
    const std::string folder = folder_of(loaded.path);
    std::set<std::string> shards;
    for (const auto& [tensor, shard] : loaded.index.weight_map) shards.insert(folder + shard);

    std::size_t present = 0;
    std::size_t excluded = 0;
    std::optional<unsigned> declared_count;
    bool names_agree = true;
    std::set<unsigned> numbers;
    std::optional<ShardName> pattern;
    for (const std::string& shard : shards) {
      if (inventory.is_present(shard)) {
        ++present;
      } else if (inventory.is_excluded(shard)) {
        ++excluded;
      } else {
        report.problems.push_back({shard, "shard_set", "missing: named by " + loaded.path + " but not on disk"});
      }
      const std::optional<ShardName> name = parse_shard_name(base_name(shard));
      if (!name) {
        names_agree = shards.size() == 1;  // a single unsharded file needs no -of-N name
        continue;
      }
      if (!pattern) pattern = name;
      if (declared_count && *declared_count != name->count) names_agree = false;
      declared_count = name->count;
      numbers.insert(name->number);
    }
    if (declared_count && (!names_agree || numbers.size() != *declared_count || shards.size() != *declared_count ||
                           *numbers.begin() != 1 || *numbers.rbegin() != *declared_count)) {
      report.problems.push_back({loaded.path, "shard_set",
                                 fmt::format("the index names {} shard(s) but the shard names say -of-{:05}",
                                             shards.size(), *declared_count)});
    }
    // A stray: a file beside the shards that looks like one of them but is not in the index.
    if (pattern) {
      for (const std::string& path : inventory.on_disk) {
        if (folder_of(path) != folder || shards.count(path) != 0) continue;
        const std::optional<ShardName> name = parse_shard_name(base_name(path));
        if (name && name->stem == pattern->stem && name->extension == pattern->extension) {
          report.problems.push_back({path, "shard_set", "stray shard: not named in " + loaded.path});
        }
      }
    }
    // metadata.total_size against the tensor bytes the shard headers describe (safetensors only).
    std::uint64_t tensor_bytes = 0;
    bool all_headers_valid = present == shards.size();
    for (const std::string& shard : shards) {
      const auto header = headers.find(shard);
      if (header == headers.end() || !header->second.header) {
        all_headers_valid = false;
        break;
      }
      tensor_bytes += header->second.header->tensor_bytes();
    }
    if (all_headers_valid && loaded.index.total_size && *loaded.index.total_size != tensor_bytes) {
      report.problems.push_back({loaded.path, "shard_set",
                                 fmt::format("metadata.total_size {} != {} bytes of tensor data in its shards",
                                             *loaded.index.total_size, tensor_bytes)});
    }
    report.shards_expected += shards.size();
    report.shards_present += present;
    summaries.push_back(fmt::format("{}: {}/{} shards{}", loaded.path, present, shards.size(),
                                    excluded > 0 ? fmt::format(" ({} excluded)", excluded) : ""));
  }
  if (indexes.empty() && report.problems.size() == problems_before) {
    // An unsharded model: its one weights file is the whole set.
    for (const auto& [path, header] : headers) {
      if (folder_of(path).empty()) {
        ++report.shards_expected;
        ++report.shards_present;
      }
    }
    return {"shard_set", CheckStatus::kSkip, "no shard index in this snapshot"};
  }
  std::string detail;
  for (const std::string& summary : summaries) detail += (detail.empty() ? "" : "; ") + summary;
  if (report.problems.size() != problems_before) {
    return {
        "shard_set", CheckStatus::kFail,
        fmt::format("{} problem(s){}{}", report.problems.size() - problems_before, detail.empty() ? "" : "; ", detail)};
  }
  return {"shard_set", CheckStatus::kPass, detail};
}

CheckResult check_safetensors_headers(const std::filesystem::path& root, const Inventory& inventory,
                                      const HeaderTable& headers, VerifyReport& report) {
  if (headers.empty()) return {"safetensors_headers", CheckStatus::kSkip, "no safetensors files"};
  const std::size_t problems_before = report.problems.size();
  std::size_t tensors = 0;
  for (const auto& [path, check] : headers) {
    if (!check.header) {
      report.problems.push_back({path, "safetensors_headers", check.problem});
    } else {
      tensors += check.header->tensors.size();
    }
  }
  // Cross-check each index with the headers of its shards (indexes that do not parse are reported by shard_set).
  VerifyReport scratch;
  for (const LoadedIndex& loaded : load_indexes(root, inventory, scratch, nullptr)) {
    const std::string folder = folder_of(loaded.path);
    std::map<std::string, std::set<std::string>> tensors_by_shard;
    for (const auto& [tensor, shard] : loaded.index.weight_map) tensors_by_shard[folder + shard].insert(tensor);
    for (const auto& [shard, wanted] : tensors_by_shard) {
      const auto header = headers.find(shard);
      if (header == headers.end() || !header->second.header) continue;
      std::set<std::string> actual;
      for (const TensorInfo& tensor : header->second.header->tensors) actual.insert(tensor.name);
      for (const std::string& tensor : wanted) {
        if (actual.count(tensor) == 0) {
          report.problems.push_back(
              {shard, "safetensors_headers",
               fmt::format("tensor '{}' is mapped to this shard by {} but not in its header", tensor, loaded.path)});
        }
      }
      for (const std::string& tensor : actual) {
        if (wanted.count(tensor) == 0) {
          report.problems.push_back(
              {shard, "safetensors_headers", fmt::format("tensor '{}' is missing from {}", tensor, loaded.path)});
        }
      }
    }
  }
  if (report.problems.size() != problems_before) {
    return {"safetensors_headers", CheckStatus::kFail,
            fmt::format("{} problem(s) in {} file(s)", report.problems.size() - problems_before, headers.size())};
  }
  return {"safetensors_headers", CheckStatus::kPass,
          fmt::format("{} file(s), {} tensors, spans exact and contiguous", headers.size(), tensors)};
}

}  // namespace hfget::verify
