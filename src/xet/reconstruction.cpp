// SPDX-License-Identifier: MIT
// The CAS's reconstruction answers, V1 and V2 (see reconstruction.hpp), read with a SAX handler so that a
// hostile answer costs memory in proportion to the terms and fetches it holds, never to a JSON tree: the shape
// is fixed, unknown fields are skipped, and every count, string and nesting level is capped while it is read.
// The raw fields are then checked and linked (each term to a fetch that covers it) in one pass.
#include "xet/reconstruction.hpp"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "xet/chunk_stream.hpp"

namespace hfget::xet {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kMaxJsonBytes = 64 * 1024 * 1024;
constexpr std::size_t kMaxTerms = 1'000'000;
constexpr std::size_t kMaxFetches = 1'000'000;
constexpr std::size_t kMaxUrlBytes = 64 * 1024;
constexpr std::size_t kMaxDepth = 16;
constexpr std::size_t kHashDigits = 64;
// The smallest serialized chunk is its header and one payload byte.
constexpr std::uint64_t kMinSerializedChunkBytes = kChunkHeaderBytes + 1;
constexpr std::uint64_t kMaxSerializedChunkBytes = kChunkHeaderBytes + kMaxPayloadBytes;
// A xorb holds at most 64 MiB serialized (spec xorb.md), about 1024 chunks of 64 KiB and at most 8192 of the
// smallest chunk the chunker cuts (8 KiB): chunk indices past this, or a byte range longer than a xorb, come
// from a hostile CAS, whose ranges would otherwise size the client's per-chunk bookkeeping.
constexpr std::uint64_t kMaxChunkIndex = 1 << 16;
constexpr std::uint64_t kMaxXorbBytes = 128ULL << 20;

[[noreturn]] void reject(const std::string& what) {
  throw ReconstructionError("reconstruction: " + what);
}

// http(s), a host, and nothing that could break a request line or a header (the URL goes to curl verbatim).
bool is_fetchable_url(std::string_view url) {
  const auto printable = [](char c) { return c > ' ' && c != '\x7f'; };
  if (!std::all_of(url.begin(), url.end(), printable)) return false;
  for (const std::string_view scheme : {"https://", "http://"}) {
    if (url.size() > scheme.size() && url.substr(0, scheme.size()) == scheme) return url[scheme.size()] != '/';
  }
  return false;
}

struct RawRange {
  std::optional<std::uint64_t> start;
  std::optional<std::uint64_t> end;
  bool present = false;
};

struct RawTerm {
  std::optional<std::string> hash;
  std::optional<std::uint64_t> unpacked_length;
  RawRange chunks;
};

// A V1 fetch_info entry, or a V2 entry (one URL for several ranges).
struct RawEntry {
  std::string xorb_hash;  // the key it is listed under
  std::optional<std::string> url;
  bool has_ranges = false;  // V2: its "ranges" array was seen
  std::size_t range_count = 0;
};

// One chunk range and its byte range: a V1 entry's range and url_range, or one of a V2 entry's ranges.
struct RawFetch {
  std::size_t entry = 0;
  RawRange chunks;
  RawRange bytes;
};

struct RawAnswer {
  std::optional<std::uint64_t> offset_into_first_range;
  bool has_terms = false;
  bool has_fetch_map = false;
  std::vector<RawTerm> terms;
  std::vector<RawEntry> entries;
  std::vector<RawFetch> fetches;
};

enum class Version { kV1, kV2 };

// What a JSON container is, given where it is. kSkip is a field hfget does not read (and all inside it).
enum class Node {
  kRoot,
  kTerms,
  kTerm,
  kTermRange,
  kFetchMap,
  kEntryList,
  kEntry,
  kV1Range,
  kV1UrlRange,
  kV2Ranges,
  kV2Range,
  kV2Chunks,
  kV2Bytes,
  kSkip,
};

bool is_array_node(Node node) {
  return node == Node::kTerms || node == Node::kEntryList || node == Node::kV2Ranges;
}

struct Frame {
  Node node;
  std::string key;  // the key of the value being read, in an object
};

class AnswerEvents final : public nlohmann::json_sax<Json> {
 public:
  explicit AnswerEvents(Version version) : version_(version) {}

  RawAnswer& answer() { return answer_; }

  bool null() override { return scalar_of_wrong_type(); }
  bool boolean(bool /*value*/) override { return scalar_of_wrong_type(); }
  bool number_integer(number_integer_t value) override {
    if (value >= 0) return number_unsigned(static_cast<number_unsigned_t>(value));
    return scalar_of_wrong_type();
  }
  bool number_unsigned(number_unsigned_t value) override;
  bool number_float(number_float_t /*value*/, const string_t& /*text*/) override { return scalar_of_wrong_type(); }
  bool string(string_t& text) override;
  bool binary(binary_t& /*value*/) override { return scalar_of_wrong_type(); }
  bool start_object(std::size_t /*elements*/) override { return open(/*is_array=*/false); }
  bool start_array(std::size_t /*elements*/) override { return open(/*is_array=*/true); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& text) override;
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*error*/) override {
    reject("not valid JSON (at byte " + std::to_string(position) + ")");
  }

 private:
  bool open(bool is_array);
  bool close();
  Node child_of(const Frame& parent) const;
  std::string where() const;
  const Frame& top() const;
  bool scalar_of_wrong_type();
  RawRange* range_being_read();

  Version version_;
  RawAnswer answer_;
  std::vector<Frame> stack_;
  std::unordered_set<std::string> xorb_keys_;
  std::unordered_set<std::string> root_keys_;
  std::string fetch_map_name_ = version_ == Version::kV1 ? "fetch_info" : "xorbs";
};

Node AnswerEvents::child_of(const Frame& parent) const {
  const std::string& key = parent.key;
  switch (parent.node) {
    case Node::kRoot:
      if (key == "terms") return Node::kTerms;
      return key == fetch_map_name_ ? Node::kFetchMap : Node::kSkip;
    case Node::kTerms: return Node::kTerm;
    case Node::kTerm: return key == "range" ? Node::kTermRange : Node::kSkip;
    case Node::kFetchMap: return Node::kEntryList;
    case Node::kEntryList: return Node::kEntry;
    case Node::kEntry:
      if (version_ == Version::kV1) {
        if (key == "range") return Node::kV1Range;
        return key == "url_range" ? Node::kV1UrlRange : Node::kSkip;
      }
      return key == "ranges" ? Node::kV2Ranges : Node::kSkip;
    case Node::kV2Ranges: return Node::kV2Range;
    case Node::kV2Range:
      if (key == "chunks") return Node::kV2Chunks;
      return key == "bytes" ? Node::kV2Bytes : Node::kSkip;
    default: return Node::kSkip;
  }
}

std::string AnswerEvents::where() const {
  std::string path;
  for (const Frame& frame : stack_) {
    if (is_array_node(frame.node)) {
      path += "[]";
    } else if (!frame.key.empty()) {
      path += (path.empty() ? "" : ".") + frame.key;
    }
  }
  return path.empty() ? "the answer" : path;
}

bool AnswerEvents::open(bool is_array) {
  if (stack_.size() >= kMaxDepth) reject("nested deeper than " + std::to_string(kMaxDepth) + " levels");
  if (stack_.empty()) {
    if (is_array) reject("the answer is not a JSON object");
    stack_.push_back({Node::kRoot, {}});
    return true;
  }
  const Node node = child_of(stack_.back());
  if (node != Node::kSkip && is_array_node(node) != is_array) {
    reject(where() + " must be " + (is_array_node(node) ? "an array" : "an object"));
  }
  switch (node) {
    case Node::kTerms: answer_.has_terms = true; break;
    case Node::kFetchMap: answer_.has_fetch_map = true; break;
    case Node::kTerm:
      if (answer_.terms.size() >= kMaxTerms) reject("more than " + std::to_string(kMaxTerms) + " terms");
      answer_.terms.emplace_back();
      break;
    case Node::kEntry:
      if (answer_.entries.size() >= kMaxFetches) reject("more than " + std::to_string(kMaxFetches) + " fetches");
      answer_.entries.emplace_back().xorb_hash = stack_[stack_.size() - 2].key;
      if (version_ == Version::kV1) answer_.fetches.emplace_back().entry = answer_.entries.size() - 1;
      break;
    case Node::kV2Ranges: answer_.entries.back().has_ranges = true; break;
    case Node::kV2Range:
      if (answer_.fetches.size() >= kMaxFetches) reject("more than " + std::to_string(kMaxFetches) + " fetches");
      answer_.fetches.emplace_back().entry = answer_.entries.size() - 1;
      ++answer_.entries.back().range_count;
      break;
    default: break;
  }
  stack_.push_back({node, {}});
  if (RawRange* range = range_being_read()) {
    *range = RawRange{};
    range->present = true;
  }
  return true;
}

bool AnswerEvents::close() {
  stack_.pop_back();
  return true;
}

bool AnswerEvents::key(string_t& text) {
  Frame& frame = stack_.back();
  if (frame.node == Node::kSkip) return true;
  if (frame.node == Node::kFetchMap) {
    if (!is_hash_hex(text)) reject(fetch_map_name_ + " has a key that is not a 64-digit lowercase hex hash");
    if (!xorb_keys_.insert(text).second) reject(fetch_map_name_ + " lists xorb " + text + " twice");
  } else if (frame.node == Node::kRoot) {
    const bool known = text == "terms" || text == fetch_map_name_ || text == "offset_into_first_range";
    if (known && !root_keys_.insert(text).second) reject("the answer has two '" + text + "' fields");
  }
  frame.key = std::move(text);
  return true;
}

// The range whose start and end the innermost object holds, if it is one.
RawRange* AnswerEvents::range_being_read() {
  switch (stack_.back().node) {
    case Node::kTermRange: return &answer_.terms.back().chunks;
    case Node::kV1Range:
    case Node::kV2Chunks: return &answer_.fetches.back().chunks;
    case Node::kV1UrlRange:
    case Node::kV2Bytes: return &answer_.fetches.back().bytes;
    default: return nullptr;
  }
}

bool AnswerEvents::number_unsigned(number_unsigned_t value) {
  const Frame& frame = top();
  if (frame.node == Node::kRoot && frame.key == "offset_into_first_range") {
    answer_.offset_into_first_range = value;
  } else if (frame.node == Node::kTerm && frame.key == "unpacked_length") {
    answer_.terms.back().unpacked_length = value;
  } else if (RawRange* range = range_being_read(); range && (frame.key == "start" || frame.key == "end")) {
    (frame.key == "start" ? range->start : range->end) = value;
  } else {
    return scalar_of_wrong_type();
  }
  return true;
}

bool AnswerEvents::string(string_t& text) {
  const Frame& frame = top();
  if (frame.node == Node::kTerm && frame.key == "hash") {
    if (!is_hash_hex(text)) {
      reject("term " + std::to_string(answer_.terms.size() - 1) + ": hash is not 64 lowercase hex digits");
    }
    answer_.terms.back().hash = std::move(text);
  } else if (frame.node == Node::kEntry && frame.key == "url") {
    if (text.size() > kMaxUrlBytes) reject(where() + " is longer than " + std::to_string(kMaxUrlBytes) + " bytes");
    answer_.entries.back().url = std::move(text);
  } else {
    return scalar_of_wrong_type();
  }
  return true;
}

const Frame& AnswerEvents::top() const {
  if (stack_.empty()) reject("the answer is not a JSON object");
  return stack_.back();
}

// A scalar that is not the one expected where it is: wrong where hfget reads a field (or an array's element),
// ignored in a field hfget does not read.
bool AnswerEvents::scalar_of_wrong_type() {
  const Frame& frame = top();
  const std::string& key = frame.key;
  const bool range_field = range_being_read() != nullptr && (key == "start" || key == "end");
  const bool scalar_field = (frame.node == Node::kRoot && key == "offset_into_first_range") ||
                            (frame.node == Node::kTerm && (key == "hash" || key == "unpacked_length")) ||
                            (frame.node == Node::kEntry && key == "url") || range_field;
  if (scalar_field || child_of(frame) != Node::kSkip) reject(where() + " has the wrong type");
  return true;
}

RawAnswer read_answer(std::string_view json, Version version) {
  if (json.size() > kMaxJsonBytes) reject("the answer is over " + std::to_string(kMaxJsonBytes) + " bytes");
  AnswerEvents events(version);
  Json::sax_parse(json.begin(), json.end(), &events);
  RawAnswer& answer = events.answer();
  if (!answer.offset_into_first_range) reject("offset_into_first_range is missing");
  if (!answer.has_terms) reject("terms is missing");
  if (!answer.has_fetch_map) reject(version == Version::kV1 ? "fetch_info is missing" : "xorbs is missing");
  return std::move(answer);
}

// A chunk range [start, end): non-empty, within u32.
std::pair<std::uint32_t, std::uint32_t> chunk_range(const RawRange& range, const std::string& name) {
  if (!range.present || !range.start || !range.end) reject(name + " is missing or incomplete");
  if (*range.start >= *range.end) reject(name + " is empty or inverted");
  if (*range.end > kMaxChunkIndex) reject(name + " is past the largest chunk index a xorb can have");
  return {static_cast<std::uint32_t>(*range.start), static_cast<std::uint32_t>(*range.end)};
}

XorbFetch make_fetch(const RawFetch& raw, const RawAnswer& answer, std::size_t index) {
  const std::string name = "fetch " + std::to_string(index);
  const RawEntry& entry = answer.entries[raw.entry];
  if (!entry.url) reject(name + ": url is missing");
  if (!is_fetchable_url(*entry.url)) reject(name + ": url is not an http(s) URL");
  XorbFetch fetch{.xorb_hash = entry.xorb_hash, .url = *entry.url};
  std::tie(fetch.chunk_begin, fetch.chunk_end) = chunk_range(raw.chunks, name + ": chunk range");
  if (!raw.bytes.present || !raw.bytes.start || !raw.bytes.end) reject(name + ": byte range is missing or incomplete");
  if (*raw.bytes.start > *raw.bytes.end) reject(name + ": byte range is inverted");
  if (*raw.bytes.end == std::numeric_limits<std::uint64_t>::max()) reject(name + ": byte range end overflows");
  fetch.byte_begin = *raw.bytes.start;
  fetch.byte_end = *raw.bytes.end + 1;
  const std::uint64_t chunks = fetch.chunk_end - fetch.chunk_begin;
  const std::uint64_t bytes = fetch.byte_end - fetch.byte_begin;
  if (bytes > kMaxXorbBytes) reject(name + ": " + std::to_string(bytes) + " bytes is more than a xorb holds");
  if (bytes < chunks * kMinSerializedChunkBytes || bytes > chunks * kMaxSerializedChunkBytes) {
    reject(name + ": " + std::to_string(bytes) + " bytes cannot hold " + std::to_string(chunks) + " chunks");
  }
  return fetch;
}

// For each xorb, its fetches sorted by first chunk, with the running maximum of their ends: the fetch that
// covers [begin, end), if any, is the one with the largest end among those starting at or before `begin`.
class FetchIndex {
 public:
  explicit FetchIndex(const std::vector<XorbFetch>& fetches) : fetches_(fetches) {
    for (std::size_t i = 0; i < fetches.size(); ++i) by_xorb_[fetches[i].xorb_hash].push_back(i);
    for (auto& [hash, list] : by_xorb_) {
      std::sort(list.begin(), list.end(),
                [&](std::size_t a, std::size_t b) { return fetches[a].chunk_begin < fetches[b].chunk_begin; });
      std::vector<std::size_t>& widest = widest_[hash];
      widest.reserve(list.size());
      for (const std::size_t i : list) {
        const bool wider = widest.empty() || fetches[i].chunk_end > fetches[widest.back()].chunk_end;
        widest.push_back(wider ? i : widest.back());
      }
    }
  }

  std::optional<std::size_t> covering(const std::string& hash, std::uint32_t begin, std::uint32_t end) const {
    const auto found = by_xorb_.find(hash);
    if (found == by_xorb_.end()) return std::nullopt;
    const std::vector<std::size_t>& list = found->second;
    const auto after = std::upper_bound(list.begin(), list.end(), begin, [&](std::uint32_t value, std::size_t i) {
      return value < fetches_[i].chunk_begin;
    });
    if (after == list.begin()) return std::nullopt;
    const std::size_t best = widest_.at(hash)[static_cast<std::size_t>(after - list.begin()) - 1];
    if (fetches_[best].chunk_end < end) return std::nullopt;
    return best;
  }

 private:
  const std::vector<XorbFetch>& fetches_;
  std::unordered_map<std::string, std::vector<std::size_t>> by_xorb_;
  std::unordered_map<std::string, std::vector<std::size_t>> widest_;
};

Term make_term(RawTerm& raw, std::size_t index, const FetchIndex& fetch_index) {
  const std::string name = "term " + std::to_string(index);
  if (!raw.hash) reject(name + ": hash is missing");
  if (!raw.unpacked_length) reject(name + ": unpacked_length is missing");
  Term term{.xorb_hash = std::move(*raw.hash), .data_bytes = *raw.unpacked_length};
  std::tie(term.chunk_begin, term.chunk_end) = chunk_range(raw.chunks, name + ": range");
  const std::uint64_t chunks = term.chunk_end - term.chunk_begin;
  if (term.data_bytes < chunks || term.data_bytes > chunks * kMaxChunkBytes) {
    reject(name + ": unpacked_length " + std::to_string(term.data_bytes) + " is impossible for " +
           std::to_string(chunks) + " chunks");
  }
  const std::optional<std::size_t> fetch = fetch_index.covering(term.xorb_hash, term.chunk_begin, term.chunk_end);
  if (!fetch)
    reject(name + ": no fetch covers chunks " + std::to_string(term.chunk_begin) + "-" +
           std::to_string(term.chunk_end) + " of xorb " + term.xorb_hash);
  term.fetch = *fetch;
  return term;
}

Reconstruction build(RawAnswer raw, Version version) {
  Reconstruction result;
  result.offset_into_first_range = *raw.offset_into_first_range;
  if (version == Version::kV2) {
    for (const RawEntry& entry : raw.entries) {
      if (!entry.has_ranges || entry.range_count == 0) reject("an entry of xorb " + entry.xorb_hash + " has no ranges");
    }
  }
  result.fetches.reserve(raw.fetches.size());
  for (std::size_t i = 0; i < raw.fetches.size(); ++i) result.fetches.push_back(make_fetch(raw.fetches[i], raw, i));
  const FetchIndex fetch_index(result.fetches);
  result.terms.reserve(raw.terms.size());
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < raw.terms.size(); ++i) {
    Term term = make_term(raw.terms[i], i, fetch_index);
    if (term.data_bytes > std::numeric_limits<std::uint64_t>::max() - total) reject("the terms' lengths overflow");
    total += term.data_bytes;
    result.terms.push_back(std::move(term));
  }
  const std::uint64_t first_term_bytes = result.terms.empty() ? 0 : result.terms.front().data_bytes;
  if (result.offset_into_first_range > 0 && result.offset_into_first_range >= first_term_bytes) {
    reject("offset_into_first_range " + std::to_string(result.offset_into_first_range) +
           " is not inside the first term");
  }
  return result;
}

}  // namespace

std::uint64_t Reconstruction::data_bytes() const {
  std::uint64_t total = 0;
  for (const Term& term : terms) total += term.data_bytes;
  return total;
}

bool is_hash_hex(std::string_view text) {
  return text.size() == kHashDigits &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

Reconstruction parse_reconstruction_v1(std::string_view json) {
  return build(read_answer(json, Version::kV1), Version::kV1);
}

Reconstruction parse_reconstruction_v2(std::string_view json) {
  return build(read_answer(json, Version::kV2), Version::kV2);
}

}  // namespace hfget::xet
