// SPDX-License-Identifier: MIT
// The safetensors format: 8 bytes little-endian N, then N bytes of JSON (padded with spaces), then the data
// region. The JSON maps tensor names to {dtype, shape, data_offsets:[begin,end]} relative to the data
// region, plus an optional "__metadata__" of strings. The reference writer orders tensors by alignment, not
// by name, and gives a zero-length tensor the offset of the next one, so checks sort by offset and allow
// empty spans anywhere.
//
// The header comes from a downloaded file and may be hostile: up to 100 MB (the reference's limit) of
// anything. Parsed into a DOM, 90 MB of it took 3.3 GB. So it is parsed as SAX events: each tensor's fields
// are judged as they arrive, its shape is multiplied out and dropped, and what is kept is its span, its
// dtype (one byte) and its name (in one shared buffer): 32 bytes plus the name per tensor, never more than
// the header's own size. Nothing else is stored (__metadata__ and unknown fields are skipped), nesting
// stops at kMaxDepth, and a file's header is streamed from disk rather than read into a string first.
#include "verify/safetensors_header.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <functional>
#include <istream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "util/file_range_streambuf.hpp"
#include "util/message_text.hpp"
#include "util/unique_fd.hpp"

namespace hfget::verify {
namespace {

using Json = nlohmann::json;

// The reference implementation refuses headers above 100 MB; so do we, before reading any of it.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
// A header nests three deep (header → tensor → shape); deeper is malformed, and refused before it costs.
constexpr std::size_t kMaxDepth = 16;

struct DtypeEntry {
  std::string_view name;
  unsigned bits;
};
// Indexed by Dtype.
constexpr std::array<DtypeEntry, 22> kDtypes{{
    {"BOOL", 8}, {"U8", 8},    {"I8", 8},      {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"I16", 16}, {"U16", 16},
    {"F16", 16}, {"BF16", 16}, {"I32", 32},    {"U32", 32},    {"F32", 32},    {"I64", 64},    {"U64", 64}, {"F64", 64},
    {"C64", 64}, {"F4", 4},    {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"E8M0", 8},    {"C128", 128},
}};
static_assert(static_cast<std::size_t>(Dtype::kC128) + 1 == kDtypes.size());

HeaderCheck failure(std::string problem) {
  return HeaderCheck{std::nullopt, std::move(problem)};
}

std::string shown(std::string_view name) {
  return util::clip_for_message(name);
}

bool checked_multiply(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

// The problems that the prefix and the file size alone reveal, before any JSON is read.
std::optional<std::string> length_problem(std::uint64_t header_length, std::uint64_t file_size) {
  if (file_size < 8) return fmt::format("truncated: {} bytes, shorter than the 8-byte header length", file_size);
  if (header_length > kMaxHeaderBytes) return fmt::format("header length {} is implausible", header_length);
  if (header_length > file_size - 8) {
    return fmt::format("truncated header: it claims {} bytes but the file has only {} after the prefix", header_length,
                       file_size - 8);
  }
  return std::nullopt;
}

// One tensor entry as its fields arrive; judged when its object closes. Each field is absent, of the type
// the format wants, or of another type; a repeated field replaces the earlier one, as in a JSON object.
struct PendingTensor {
  enum class Field : std::uint8_t { kAbsent, kRight, kWrong };
  enum class ShapeProblem : std::uint8_t { kNone, kNotInteger, kTooLarge };

  Field dtype = Field::kAbsent;
  std::string dtype_text;
  Field shape = Field::kAbsent;
  std::uint64_t elements = 1;
  ShapeProblem shape_problem = ShapeProblem::kNone;  // the first one met, as a loop over the dimensions would
  Field offsets = Field::kAbsent;
  std::size_t offset_count = 0;
  bool offsets_unsigned = true;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

// The rules of one tensor, in the order they are reported; on success `tensor` holds its span and dtype.
std::optional<std::string> judge_tensor(const std::string& name, const PendingTensor& pending,
                                        std::uint64_t data_length, TensorInfo& tensor) {
  using Field = PendingTensor::Field;
  if (pending.dtype != Field::kRight) return fmt::format("tensor '{}' has no dtype", shown(name));
  if (pending.shape != Field::kRight) return fmt::format("tensor '{}' has no shape", shown(name));
  if (pending.offsets != Field::kRight || pending.offset_count != 2 || !pending.offsets_unsigned) {
    return fmt::format("tensor '{}' has no valid data_offsets", shown(name));
  }
  const std::optional<Dtype> dtype = parse_dtype(pending.dtype_text);
  if (!dtype) return fmt::format("tensor '{}' has unknown dtype '{}'", shown(name), shown(pending.dtype_text));
  switch (pending.shape_problem) {
    case PendingTensor::ShapeProblem::kNotInteger:
      return fmt::format("tensor '{}' has a negative or non-integer dimension", shown(name));
    case PendingTensor::ShapeProblem::kTooLarge:
      return fmt::format("tensor '{}' has a shape too large to address", shown(name));
    case PendingTensor::ShapeProblem::kNone: break;
  }
  std::uint64_t total_bits = 0;
  if (!checked_multiply(pending.elements, dtype_bits(*dtype), total_bits)) {
    return fmt::format("tensor '{}' is too large to address", shown(name));
  }
  if (total_bits % 8 != 0) {
    return fmt::format("tensor '{}' of dtype {} does not fill whole bytes", shown(name), dtype_name(*dtype));
  }
  if (pending.end < pending.begin) return fmt::format("tensor '{}' ends before it begins", shown(name));
  const std::uint64_t expected_bytes = total_bits / 8;
  if (pending.end - pending.begin != expected_bytes) {
    return fmt::format("tensor '{}' spans {} bytes but its shape and dtype need {}", shown(name),
                       pending.end - pending.begin, expected_bytes);
  }
  if (pending.end > data_length) {
    return fmt::format("tensor '{}' is out of bounds: it ends at byte {} of a {}-byte data region", shown(name),
                       pending.end, data_length);
  }
  tensor.begin = pending.begin;
  tensor.end = pending.end;
  tensor.dtype = *dtype;
  return std::nullopt;
}

// The SAX handler: turns the header's events into TensorInfo records and the first problem. After a problem
// it keeps reading (so that invalid JSON further on is still reported as such, as a whole parse would) but
// stores nothing more. Depth counts the containers open: 1 inside the header object, 2 inside a tensor (or
// __metadata__), 3 inside a tensor's shape or data_offsets.
class HeaderEvents final : public nlohmann::json_sax<Json> {
 public:
  explicit HeaderEvents(SafetensorsHeader& header) : header_(header) {}

  bool too_deep() const noexcept { return too_deep_; }
  const std::string& problem() const noexcept { return problem_; }

  bool null() override { return scalar(Value::kOther); }
  bool boolean(bool /*value*/) override { return scalar(Value::kOther); }
  bool number_integer(number_integer_t /*value*/) override { return scalar(Value::kOther); }
  bool number_unsigned(number_unsigned_t number) override {
    number_ = number;
    return scalar(Value::kUnsigned);
  }
  bool number_float(number_float_t /*value*/, const string_t& /*text*/) override { return scalar(Value::kOther); }
  bool string(string_t& text) override {
    text_ = &text;
    return scalar(Value::kString);
  }
  bool binary(binary_t& /*value*/) override { return scalar(Value::kOther); }

  bool start_object(std::size_t /*elements*/) override { return open(Value::kObject); }
  bool start_array(std::size_t /*elements*/) override { return open(Value::kArray); }
  bool end_object() override {
    --depth_;
    if (depth_ == 1 && in_tensor_) finish_tensor();
    return true;
  }
  bool end_array() override {
    --depth_;
    if (depth_ == 2) array_ = Key::kOther;
    return true;
  }

  bool key(string_t& text) override {
    if (!top_is_object_) return true;
    if (depth_ == 1) {
      name_ = std::move(text);
    } else if (depth_ == 2 && in_tensor_) {
      field_ = text == "dtype"          ? Key::kDtype
               : text == "shape"        ? Key::kShape
               : text == "data_offsets" ? Key::kOffsets
                                        : Key::kOther;
    }
    return true;
  }

  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*error*/) override {
    return false;
  }

 private:
  enum class Value : std::uint8_t { kObject, kArray, kString, kUnsigned, kOther };
  enum class Key : std::uint8_t { kDtype, kShape, kOffsets, kOther };

  void note(std::string problem) {
    if (problem_.empty()) problem_ = std::move(problem);
  }

  bool open(Value kind) {
    if (depth_ >= kMaxDepth) {
      too_deep_ = true;
      return false;
    }
    value(kind);
    ++depth_;
    return true;
  }

  bool scalar(Value kind) {
    value(kind);
    return true;
  }

  // A value (a scalar, or a container about to open) at the current depth.
  void value(Value kind) {
    using Field = PendingTensor::Field;
    if (depth_ == 0) {
      top_is_object_ = kind == Value::kObject;
      if (!top_is_object_) note("the header is not a JSON object");
    } else if (!top_is_object_) {
      // Inside a top level that is not an object: nothing to check.
    } else if (depth_ == 1) {
      if (name_ == "__metadata__") {
        if (kind != Value::kObject) note("__metadata__ is not a JSON object");
      } else if (kind != Value::kObject) {
        note(fmt::format("tensor '{}' is not a JSON object", shown(name_)));
      } else {
        in_tensor_ = true;
        pending_ = PendingTensor{};
      }
    } else if (depth_ == 2 && in_tensor_) {
      switch (field_) {
        case Key::kDtype:
          pending_.dtype = kind == Value::kString ? Field::kRight : Field::kWrong;
          if (kind == Value::kString) pending_.dtype_text = std::move(*text_);
          break;
        case Key::kShape:
          pending_.shape = kind == Value::kArray ? Field::kRight : Field::kWrong;
          pending_.elements = 1;
          pending_.shape_problem = PendingTensor::ShapeProblem::kNone;
          break;
        case Key::kOffsets:
          pending_.offsets = kind == Value::kArray ? Field::kRight : Field::kWrong;
          pending_.offset_count = 0;
          pending_.offsets_unsigned = true;
          break;
        case Key::kOther: break;
      }
      if (kind == Value::kArray) array_ = field_;
    } else if (depth_ == 3 && in_tensor_) {
      element(kind);
    }
  }

  // An element of the tensor's open shape or data_offsets array.
  void element(Value kind) {
    if (array_ == Key::kShape && pending_.shape_problem == PendingTensor::ShapeProblem::kNone) {
      if (kind != Value::kUnsigned) {
        pending_.shape_problem = PendingTensor::ShapeProblem::kNotInteger;
      } else if (!checked_multiply(pending_.elements, number_, pending_.elements)) {
        pending_.shape_problem = PendingTensor::ShapeProblem::kTooLarge;
      }
    } else if (array_ == Key::kOffsets) {
      ++pending_.offset_count;
      if (kind != Value::kUnsigned) {
        pending_.offsets_unsigned = false;
      } else if (pending_.offset_count == 1) {
        pending_.begin = number_;
      } else if (pending_.offset_count == 2) {
        pending_.end = number_;
      }
    }
  }

  void finish_tensor() {
    in_tensor_ = false;
    if (!problem_.empty()) return;  // the header is refused already: keep nothing more
    TensorInfo tensor;
    if (std::optional<std::string> problem = judge_tensor(name_, pending_, header_.data_length, tensor)) {
      note(std::move(*problem));
      return;
    }
    // The header is at most kMaxHeaderBytes long, so its names fit 32-bit offsets.
    tensor.name_offset = static_cast<std::uint32_t>(header_.names.size());
    tensor.name_size = static_cast<std::uint32_t>(name_.size());
    header_.names += name_;
    header_.tensors.push_back(tensor);
  }

  SafetensorsHeader& header_;
  std::size_t depth_ = 0;
  bool too_deep_ = false;
  bool top_is_object_ = false;
  bool in_tensor_ = false;
  std::string name_;         // the key being read at depth 1: a tensor's name
  Key field_ = Key::kOther;  // the key being read inside a tensor
  Key array_ = Key::kOther;  // which of the tensor's arrays is open
  PendingTensor pending_;
  std::uint64_t number_ = 0;  // the unsigned scalar being handled
  string_t* text_ = nullptr;  // the string scalar being handled
  std::string problem_;
};

// The rules across tensors, once all are read: names unique, spans covering the data region exactly.
std::optional<std::string> check_spans(SafetensorsHeader& header) {
  // Twice the same name: sorted by (hash, name), equal names end up side by side, and most comparisons are
  // settled by the hash alone. (Names crafted to share a hash fall back to comparing names: never quadratic.)
  struct Named {
    std::size_t hash;
    std::string_view name;
    bool operator<(const Named& other) const { return hash != other.hash ? hash < other.hash : name < other.name; }
  };
  std::vector<Named> by_hash;
  by_hash.reserve(header.tensors.size());
  for (const TensorInfo& tensor : header.tensors) {
    const std::string_view name = header.name_of(tensor);
    by_hash.push_back({std::hash<std::string_view>{}(name), name});
  }
  std::sort(by_hash.begin(), by_hash.end());
  for (std::size_t i = 1; i < by_hash.size(); ++i) {
    if (by_hash[i].name == by_hash[i - 1].name) {
      return fmt::format("tensor '{}' appears twice in the header", shown(by_hash[i].name));
    }
  }
  by_hash = {};

  std::sort(header.tensors.begin(), header.tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t covered = 0;
  std::string_view previous_name;
  for (const TensorInfo& tensor : header.tensors) {
    const std::string_view name = header.name_of(tensor);
    if (tensor.begin < covered) {
      return fmt::format("tensors '{}' and '{}' overlap at byte {}", shown(previous_name), shown(name), tensor.begin);
    }
    if (tensor.begin > covered) {
      return fmt::format("gap in the data region: bytes {}-{} belong to no tensor (before '{}')", covered, tensor.begin,
                         shown(name));
    }
    covered = tensor.end;
    previous_name = name;
  }
  if (covered != header.data_length) {
    return fmt::format("the tensors cover {} of the {} data bytes: the file is longer than its header says", covered,
                       header.data_length);
  }
  return std::nullopt;
}

// Parses the header JSON from `input` (a range of chars or a std::istream) and checks it; the lengths were
// checked by the caller.
template <typename... Input>
HeaderCheck parse_header(std::uint64_t header_length, std::uint64_t file_size, Input&&... input) {
  SafetensorsHeader header;
  header.header_length = header_length;
  header.data_length = file_size - 8 - header_length;
  HeaderEvents events(header);
  const bool parsed = Json::sax_parse(std::forward<Input>(input)..., &events);
  if (events.too_deep()) return failure(fmt::format("the header is nested more than {} levels deep", kMaxDepth));
  if (!parsed) return failure("the header is not valid JSON");
  if (!events.problem().empty()) return failure(events.problem());
  if (std::optional<std::string> problem = check_spans(header)) return failure(std::move(*problem));
  return HeaderCheck{std::move(header), {}};
}

}  // namespace

std::optional<Dtype> parse_dtype(std::string_view name) {
  for (std::size_t i = 0; i < kDtypes.size(); ++i) {
    if (kDtypes[i].name == name) return static_cast<Dtype>(i);
  }
  return std::nullopt;
}

std::string_view dtype_name(Dtype dtype) {
  return kDtypes[static_cast<std::size_t>(dtype)].name;
}

unsigned dtype_bits(Dtype dtype) {
  return kDtypes[static_cast<std::size_t>(dtype)].bits;
}

std::optional<unsigned> dtype_bits(std::string_view dtype) {
  const std::optional<Dtype> parsed = parse_dtype(dtype);
  if (!parsed) return std::nullopt;
  return dtype_bits(*parsed);
}

HeaderCheck check_safetensors_header(std::uint64_t header_length, std::string_view header_json,
                                     std::uint64_t file_size) {
  if (std::optional<std::string> problem = length_problem(header_length, file_size)) return failure(*problem);
  if (header_json.size() != header_length) return failure("truncated header");
  return parse_header(header_length, file_size, header_json.begin(), header_json.end());
}

HeaderCheck read_safetensors_header(const std::filesystem::path& path) {
  util::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return failure(fmt::format("cannot open: {}", std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return failure(fmt::format("cannot stat: {}", std::strerror(errno)));
  const auto file_size = static_cast<std::uint64_t>(info.st_size);
  std::array<unsigned char, 8> prefix{};
  if (file_size < 8 || ::pread(fd.get(), prefix.data(), prefix.size(), 0) != 8) {
    return failure(fmt::format("truncated: {} bytes, shorter than the 8-byte header length", file_size));
  }
  std::uint64_t header_length = 0;
  for (std::size_t i = 0; i < 8; ++i) header_length |= std::uint64_t{prefix[i]} << (8 * i);
  if (std::optional<std::string> problem = length_problem(header_length, file_size)) return failure(*problem);

  util::FileRangeStreambuf window(fd.get(), 8, header_length);
  std::istream stream(&window);
  HeaderCheck result = parse_header(header_length, file_size, stream);
  if (window.error() != 0) return failure(fmt::format("cannot read: {}", std::strerror(window.error())));
  if (window.ended_early()) return failure("truncated header");  // the file shrank while being read
  return result;
}

}  // namespace hfget::verify
