// SPDX-License-Identifier: MIT
// The shard checks compare a snapshot's indexes with its safetensors headers. Both come from the download
// and may be hostile: a repo of 64 shards whose headers are each 90 MB of tiny tensors must not cost 64
// headers' worth of memory. So the weights are scanned in one pass that holds one header at a time: the
// indexes are parsed first (compactly, see WeightMap), then each header is read, checked, compared with
// every index that names its file, and reduced to a HeaderSummary (its problem, its tensor bytes and
// count) before the next one is read. Peak memory is the indexes' weight_maps plus the largest header's
// names and spans: about the size of those files, never their sum. A mismatch names its tensors up to
// kMaxNamedMismatches per shard and direction and counts the rest in one more line, so that a hostile pair
// of index and header cannot fill the report with millions of lines either.
#include "verify/shard_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "util/message_text.hpp"
#include "verify/safetensors_header.hpp"
#include "verify/shard_index.hpp"

namespace hfget::verify {
namespace {

constexpr std::size_t kMaxNamedMismatches = 20;

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

// An index that parsed, while the headers are compared with it.
struct OpenIndex {
  std::size_t summary = 0;  // its IndexSummary in WeightsScan::indexes
  WeightMap weight_map;
  std::unordered_map<std::string, std::uint32_t> shard_ids;    // repo path of a shard → WeightMap shard id
  std::vector<std::vector<std::uint32_t>> tensors_of_shard;    // shard id → its tensors, in name order
  std::vector<bool> found;                                     // tensor (name order) → seen in its shard's header
  std::map<std::string, std::vector<FileProblem>> mismatches;  // by shard path, as the report lists them
};

OpenIndex open_index(std::size_t summary, IndexSummary& index, WeightMap weight_map) {
  OpenIndex open;
  open.summary = summary;
  open.weight_map = std::move(weight_map);
  const std::string folder = folder_of(index.path);
  const std::vector<std::string>& shards = open.weight_map.shards();
  for (std::uint32_t id = 0; id < shards.size(); ++id) {
    open.shard_ids.emplace(folder + shards[id], id);
    index.shards.insert(folder + shards[id]);
  }
  open.tensors_of_shard.resize(shards.size());
  for (std::size_t i = 0; i < open.weight_map.size(); ++i) {
    open.tensors_of_shard[open.weight_map.shard_id(i)].push_back(static_cast<std::uint32_t>(i));
  }
  open.found.assign(open.weight_map.size(), false);
  return open;
}

// Adds "tensor 'x' …" for the first kMaxNamedMismatches names, then one line counting the rest.
template <typename Names, typename Name, typename Rest>
void name_mismatches(std::vector<FileProblem>& out, const std::string& shard, const Names& names, Name&& line,
                     Rest&& rest) {
  for (std::size_t i = 0; i < names.size() && i < kMaxNamedMismatches; ++i) {
    out.push_back({shard, "safetensors_headers", line(util::clip_for_message(names[i]))});
  }
  if (names.size() > kMaxNamedMismatches) {
    out.push_back({shard, "safetensors_headers", rest(names.size() - kMaxNamedMismatches)});
  }
}

// Compares one well-formed header with an index that names its file.
void compare(OpenIndex& index, const std::string& index_path, const std::string& shard, std::uint32_t shard_id,
             const SafetensorsHeader& header) {
  std::vector<std::string_view> unindexed;
  for (const TensorInfo& tensor : header.tensors) {
    const std::string_view name = header.name_of(tensor);
    const std::optional<std::size_t> at = index.weight_map.find(name);
    if (at && index.weight_map.shard_id(*at) == shard_id) {
      index.found[*at] = true;
    } else {
      unindexed.push_back(name);
    }
  }
  std::vector<std::string_view> absent;
  for (const std::uint32_t at : index.tensors_of_shard[shard_id]) {
    if (!index.found[at]) absent.push_back(index.weight_map.tensor(at));
  }
  std::sort(unindexed.begin(), unindexed.end());
  if (absent.empty() && unindexed.empty()) return;

  std::vector<FileProblem>& out = index.mismatches[shard];
  name_mismatches(
      out, shard, absent,
      [&](const std::string& name) {
        return fmt::format("tensor '{}' is mapped to this shard by {} but not in its header", name, index_path);
      },
      [&](std::size_t more) {
        return fmt::format("{} more tensor(s) are mapped to this shard by {} but not in its header", more, index_path);
      });
  name_mismatches(
      out, shard, unindexed,
      [&](const std::string& name) { return fmt::format("tensor '{}' is missing from {}", name, index_path); },
      [&](std::size_t more) {
        return fmt::format("{} more tensor(s) of this shard are missing from {}", more, index_path);
      });
}

}  // namespace

WeightsScan scan_weights(const std::filesystem::path& root, const Inventory& inventory) {
  WeightsScan scan;
  std::vector<OpenIndex> open;
  for (const ExpectedFile& file : inventory.expected) {
    if (!file.present || !is_shard_index_name(base_name(file.path))) continue;
    ShardIndexParse parsed = read_shard_index(root / file.path);
    scan.indexes.push_back({file.path, parsed.problem, std::nullopt, {}, {}});
    if (!parsed.index) continue;
    scan.indexes.back().total_size = parsed.index->total_size;
    open.push_back(open_index(scan.indexes.size() - 1, scan.indexes.back(), std::move(parsed.index->weight_map)));
  }

  for (const std::string& path : inventory.on_disk) {
    if (!ends_with(path, ".safetensors")) continue;
    const HeaderCheck check = read_safetensors_header(root / path);
    HeaderSummary& summary = scan.headers[path];
    if (!check.header) {
      summary.problem = check.problem.empty() ? "invalid header" : check.problem;
      continue;
    }
    summary.tensor_bytes = check.header->tensor_bytes();
    summary.tensors = check.header->tensors.size();
    for (OpenIndex& index : open) {
      const auto id = index.shard_ids.find(path);
      if (id != index.shard_ids.end())
        compare(index, scan.indexes[index.summary].path, path, id->second, *check.header);
    }
  }

  for (OpenIndex& index : open) {
    std::vector<FileProblem>& out = scan.indexes[index.summary].header_mismatches;
    for (auto& [shard, problems] : index.mismatches) {
      out.insert(out.end(), std::make_move_iterator(problems.begin()), std::make_move_iterator(problems.end()));
    }
  }
  return scan;
}

CheckResult check_shard_sets(const Inventory& inventory, const WeightsScan& scan, VerifyReport& report) {
  const std::size_t problems_before = report.problems.size();
  std::size_t parsed_indexes = 0;
  for (const IndexSummary& index : scan.indexes) {
    if (!index.problem.empty()) {
      report.problems.push_back({index.path, "shard_set", index.problem});
    } else {
      ++parsed_indexes;
    }
  }
  std::vector<std::string> summaries;
  for (const IndexSummary& index : scan.indexes) {
    if (!index.problem.empty()) continue;
    const std::string folder = folder_of(index.path);
    const std::set<std::string>& shards = index.shards;

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
        report.problems.push_back({shard, "shard_set", "missing: named by " + index.path + " but not on disk"});
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
      report.problems.push_back({index.path, "shard_set",
                                 fmt::format("the index names {} shard(s) but the shard names say -of-{:05}",
                                             shards.size(), *declared_count)});
    }
    // A stray: a file beside the shards that looks like one of them but is not in the index.
    if (pattern) {
      for (const std::string& path : inventory.on_disk) {
        if (folder_of(path) != folder || shards.count(path) != 0) continue;
        const std::optional<ShardName> name = parse_shard_name(base_name(path));
        if (name && name->stem == pattern->stem && name->extension == pattern->extension) {
          report.problems.push_back({path, "shard_set", "stray shard: not named in " + index.path});
        }
      }
    }
    // metadata.total_size against the tensor bytes the shard headers describe (safetensors only).
    std::uint64_t tensor_bytes = 0;
    bool all_headers_valid = present == shards.size();
    for (const std::string& shard : shards) {
      const auto header = scan.headers.find(shard);
      if (header == scan.headers.end() || !header->second.ok()) {
        all_headers_valid = false;
        break;
      }
      tensor_bytes += header->second.tensor_bytes;
    }
    if (all_headers_valid && index.total_size && *index.total_size != tensor_bytes) {
      report.problems.push_back({index.path, "shard_set",
                                 fmt::format("metadata.total_size {} != {} bytes of tensor data in its shards",
                                             *index.total_size, tensor_bytes)});
    }
    report.shards_expected += shards.size();
    report.shards_present += present;
    summaries.push_back(fmt::format("{}: {}/{} shards{}", index.path, present, shards.size(),
                                    excluded > 0 ? fmt::format(" ({} excluded)", excluded) : ""));
  }
  if (parsed_indexes == 0 && report.problems.size() == problems_before) {
    // An unsharded model: its one weights file is the whole set.
    for (const auto& [path, header] : scan.headers) {
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

CheckResult check_safetensors_headers(const WeightsScan& scan, VerifyReport& report) {
  if (scan.headers.empty()) return {"safetensors_headers", CheckStatus::kSkip, "no safetensors files"};
  const std::size_t problems_before = report.problems.size();
  std::size_t tensors = 0;
  for (const auto& [path, header] : scan.headers) {
    if (!header.ok()) {
      report.problems.push_back({path, "safetensors_headers", header.problem});
    } else {
      tensors += header.tensors;
    }
  }
  // Each index against the headers of its shards (indexes that do not parse are reported by shard_set).
  for (const IndexSummary& index : scan.indexes) {
    report.problems.insert(report.problems.end(), index.header_mismatches.begin(), index.header_mismatches.end());
  }
  if (report.problems.size() != problems_before) {
    return {"safetensors_headers", CheckStatus::kFail,
            fmt::format("{} problem(s) in {} file(s)", report.problems.size() - problems_before, scan.headers.size())};
  }
  return {"safetensors_headers", CheckStatus::kPass,
          fmt::format("{} file(s), {} tensors, spans exact and contiguous", scan.headers.size(), tensors)};
}

}  // namespace hfget::verify
