// SPDX-License-Identifier: MIT
// A shard index is a downloaded file and may be hostile: 256 MiB of anything (a real one for a trillion
// parameters, ~200 K tensors, is 20-30 MB). Parsed into a DOM, 120 MB of it took 4.4 GB. So it is read
// from disk through a 64 KiB window and parsed as SAX events that keep weight_map (in a WeightMap: names in
// one buffer, shard files interned) and metadata.total_size, and skip everything else unstored; nesting
// stops at kMaxDepth. Memory is about the weight_map's own size in the file, never a multiple of it.
#include "verify/shard_index.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <istream>
#include <limits>
#include <nlohmann/json.hpp>

#include "util/file_range_streambuf.hpp"
#include "util/message_text.hpp"
#include "util/unique_fd.hpp"

namespace hfget::verify {
namespace {

using Json = nlohmann::json;

constexpr std::uint64_t kMaxIndexBytes = 256 << 20;
// An index nests two deep (index → weight_map → file name); its metadata may hold a little more.
constexpr std::size_t kMaxDepth = 32;

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

// The SAX handler. Depth counts the containers open: 1 inside the index object, 2 inside weight_map or
// metadata. A key given twice counts once, with its last value, as in a parsed JSON object. A malformed
// entry is remembered and the parse goes on storing nothing (so that invalid JSON further on is still
// reported as such); a top level that is not an object, a limit passed or too deep a nesting stops it.
class IndexEvents final : public nlohmann::json_sax<Json> {
 public:
  bool too_deep() const noexcept { return too_deep_; }
  const std::string& fatal() const noexcept { return fatal_; }  // a limit passed
  bool has_weight_map() const noexcept { return has_weight_map_; }
  const std::string& entry_problem() const noexcept { return entry_problem_; }
  ShardIndex& index() noexcept { return index_; }

  bool null() override { return value(Value::kOther); }
  bool boolean(bool /*value*/) override { return value(Value::kOther); }
  bool number_integer(number_integer_t /*value*/) override { return value(Value::kOther); }
  bool number_unsigned(number_unsigned_t number) override {
    unsigned_ = number;
    return value(Value::kUnsigned);
  }
  bool number_float(number_float_t number, const string_t& /*text*/) override {
    float_ = number;
    return value(Value::kFloat);
  }
  bool string(string_t& text) override {
    text_ = &text;
    return value(Value::kString);
  }
  bool binary(binary_t& /*value*/) override { return value(Value::kOther); }

  bool start_object(std::size_t /*elements*/) override { return open(Value::kObject); }
  bool start_array(std::size_t /*elements*/) override { return open(Value::kArray); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& text) override {
    if (depth_ == 1) {
      section_ = text == "weight_map" ? Section::kWeightMap : text == "metadata" ? Section::kMetadata : Section::kOther;
    } else if (depth_ == 2 && open_section_ == Section::kWeightMap) {
      tensor_ = std::move(text);
    } else if (depth_ == 2 && open_section_ == Section::kMetadata) {
      at_total_size_ = text == "total_size";
    }
    return true;
  }

  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*error*/) override {
    return false;
  }

 private:
  enum class Value : std::uint8_t { kObject, kArray, kString, kUnsigned, kFloat, kOther };
  enum class Section : std::uint8_t { kWeightMap, kMetadata, kOther };

  bool open(Value kind) {
    if (depth_ >= kMaxDepth) {
      too_deep_ = true;
      return false;
    }
    if (!value(kind)) return false;
    if (depth_ == 1 && kind == Value::kObject) open_section_ = section_;
    ++depth_;
    return true;
  }

  bool close() {
    --depth_;
    if (depth_ == 1) open_section_ = Section::kOther;
    return true;
  }

  // A value (a scalar, or a container about to open) at the current depth; false stops the parse.
  bool value(Value kind) {
    if (depth_ == 0) return kind == Value::kObject;  // else: not an index
    if (depth_ == 1 && section_ == Section::kWeightMap) {
      // A weight_map given again replaces the earlier one.
      index_.weight_map.clear();
      entry_problem_.clear();
      has_weight_map_ = kind == Value::kObject;
    } else if (depth_ == 1 && section_ == Section::kMetadata) {
      index_.total_size.reset();
    } else if (depth_ == 2 && open_section_ == Section::kWeightMap) {
      if (!entry_problem_.empty()) return true;  // refused already: store nothing more
      if (kind != Value::kString) {
        entry_problem_ = fmt::format("weight_map entry '{}' is not a file name", util::clip_for_message(tensor_));
        index_.weight_map.clear();
        return true;
      }
      if (std::optional<std::string> problem = index_.weight_map.add(tensor_, *text_)) {
        fatal_ = std::move(*problem);
        return false;
      }
    } else if (depth_ == 2 && open_section_ == Section::kMetadata && at_total_size_) {
      index_.total_size.reset();
      if (kind == Value::kUnsigned) index_.total_size = unsigned_;
      // Some writers store it as a float (e.g. 372864.0).
      if (kind == Value::kFloat && float_ >= 0 && float_ < 9.0e18) {
        index_.total_size = static_cast<std::uint64_t>(float_);
      }
    }
    return true;
  }

  ShardIndex index_;
  std::size_t depth_ = 0;
  bool too_deep_ = false;
  std::string fatal_;
  Section section_ = Section::kOther;       // the key being read at depth 1
  Section open_section_ = Section::kOther;  // the object open at depth 1 → 2
  bool has_weight_map_ = false;
  std::string entry_problem_;
  std::string tensor_;  // the key being read inside weight_map
  bool at_total_size_ = false;
  std::uint64_t unsigned_ = 0;  // the scalar being handled
  double float_ = 0;
  string_t* text_ = nullptr;
};

template <typename... Input>
ShardIndexParse parse_index(Input&&... input) {
  IndexEvents events;
  const bool parsed = Json::sax_parse(std::forward<Input>(input)..., &events);
  if (!events.fatal().empty()) return {std::nullopt, events.fatal()};
  if (events.too_deep()) return {std::nullopt, fmt::format("the index is nested more than {} levels deep", kMaxDepth)};
  if (!parsed) return {std::nullopt, "the index is not a valid JSON object"};
  if (!events.has_weight_map()) return {std::nullopt, "the index has no weight_map"};
  if (!events.entry_problem().empty()) return {std::nullopt, events.entry_problem()};
  events.index().weight_map.finish();
  return {std::move(events.index()), {}};
}

}  // namespace

std::optional<std::string> WeightMap::add(std::string_view tensor, std::string_view shard) {
  if (names_.size() + tensor.size() > std::numeric_limits<std::uint32_t>::max()) {
    return std::string("the weight_map's tensor names pass 4 GiB");
  }
  // Consecutive entries mostly name the same file: look it up only when it changes.
  std::uint32_t id = 0;
  if (!entries_.empty() && shards_[entries_.back().shard] == shard) {
    id = entries_.back().shard;
  } else {
    const auto [it, inserted] = shard_ids_.try_emplace(std::string(shard), static_cast<std::uint32_t>(shards_.size()));
    if (inserted) {
      if (shards_.size() == kMaxShards) {
        shard_ids_.erase(it);
        return fmt::format("the weight_map names more than {} shard files", kMaxShards);
      }
      shards_.push_back(it->first);
    }
    id = it->second;
  }
  entries_.push_back({static_cast<std::uint32_t>(names_.size()), static_cast<std::uint32_t>(tensor.size()), id});
  names_ += tensor;
  return std::nullopt;
}

void WeightMap::finish() {
  const auto name = [this](const Entry& entry) {
    return std::string_view(names_).substr(entry.name_offset, entry.name_size);
  };
  const auto by_name = [&](const Entry& a, const Entry& b) { return name(a) < name(b); };
  // transformers writes the map sorted (json.dumps(sort_keys=True)): then there is nothing to sort.
  if (!std::is_sorted(entries_.begin(), entries_.end(), by_name)) {
    std::stable_sort(entries_.begin(), entries_.end(), by_name);
  }
  // Of a run of equal names (in file order, the sort being stable) the last one counts.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (i + 1 < entries_.size() && name(entries_[i]) == name(entries_[i + 1])) continue;
    entries_[kept++] = entries_[i];
  }
  entries_.resize(kept);
  entries_.shrink_to_fit();
  shard_ids_ = {};  // only add() needs it
}

void WeightMap::clear() {
  names_.clear();
  entries_.clear();
  shards_.clear();
  shard_ids_.clear();
}

std::optional<std::size_t> WeightMap::find(std::string_view tensor) const {
  const auto it = std::lower_bound(entries_.begin(), entries_.end(), tensor, [this](const Entry& entry, auto wanted) {
    return std::string_view(names_).substr(entry.name_offset, entry.name_size) < wanted;
  });
  if (it == entries_.end() || this->tensor(static_cast<std::size_t>(it - entries_.begin())) != tensor) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(it - entries_.begin());
}

std::optional<std::string_view> WeightMap::shard_of(std::string_view tensor) const {
  const std::optional<std::size_t> at = find(tensor);
  if (!at) return std::nullopt;
  return shard(*at);
}

bool is_shard_index_name(std::string_view file_name) {
  return ends_with(file_name, ".safetensors.index.json") || ends_with(file_name, ".bin.index.json");
}

ShardIndexParse parse_shard_index(std::string_view json_text) {
  return parse_index(json_text.begin(), json_text.end());
}

ShardIndexParse read_shard_index(const std::filesystem::path& path) {
  util::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat info {};
  if (!fd.valid() || ::fstat(fd.get(), &info) != 0) {
    return {std::nullopt, fmt::format("cannot read the index: {}", std::strerror(errno))};
  }
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size > kMaxIndexBytes) {
    return {std::nullopt, fmt::format("the index is {} bytes, more than the {} hfget reads", size, kMaxIndexBytes)};
  }
  util::FileRangeStreambuf window(fd.get(), 0, size);
  std::istream stream(&window);
  ShardIndexParse parsed = parse_index(stream);
  if (window.error() != 0)
    return {std::nullopt, fmt::format("cannot read the index: {}", std::strerror(window.error()))};
  if (window.ended_early()) return {std::nullopt, "the index shrank while being read"};
  return parsed;
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
