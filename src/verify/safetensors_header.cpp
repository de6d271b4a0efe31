// SPDX-License-Identifier: MIT
// The safetensors format: 8 bytes little-endian N, then N bytes of JSON (padded with spaces), then the data
// region. The JSON maps tensor names to {dtype, shape, data_offsets:[begin,end]} relative to the data
// region, plus an optional "__metadata__" of strings. The reference writer orders tensors by alignment, not
// by name, and gives a zero-length tensor the offset of the next one, so checks sort by offset and allow
// empty spans anywhere.
#include "verify/safetensors_header.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "util/unique_fd.hpp"

namespace hfget::verify {
namespace {

// The reference implementation refuses headers above 100 MB; so do we, before allocating anything.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

HeaderCheck failure(std::string problem) {
  return HeaderCheck{std::nullopt, std::move(problem)};
}

bool checked_multiply(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

std::optional<std::string> parse_tensor(const std::string& name, const nlohmann::json& value, TensorInfo& tensor) {
  if (!value.is_object()) return fmt::format("tensor '{}' is not a JSON object", name);
  tensor.name = name;
  const auto dtype = value.find("dtype");
  const auto shape = value.find("shape");
  const auto offsets = value.find("data_offsets");
  if (dtype == value.end() || !dtype->is_string()) return fmt::format("tensor '{}' has no dtype", name);
  if (shape == value.end() || !shape->is_array()) return fmt::format("tensor '{}' has no shape", name);
  if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned()) {
    return fmt::format("tensor '{}' has no valid data_offsets", name);
  }
  tensor.dtype = dtype->get<std::string>();
  const std::optional<unsigned> bits = dtype_bits(tensor.dtype);
  if (!bits) return fmt::format("tensor '{}' has unknown dtype '{}'", name, tensor.dtype);

  std::uint64_t elements = 1;
  for (const nlohmann::json& dimension : *shape) {
    if (!dimension.is_number_unsigned())
      return fmt::format("tensor '{}' has a negative or non-integer dimension", name);
    tensor.shape.push_back(dimension.get<std::uint64_t>());
    if (!checked_multiply(elements, tensor.shape.back(), elements)) {
      return fmt::format("tensor '{}' has a shape too large to address", name);
    }
  }
  std::uint64_t total_bits = 0;
  if (!checked_multiply(elements, *bits, total_bits)) return fmt::format("tensor '{}' is too large to address", name);
  if (total_bits % 8 != 0) return fmt::format("tensor '{}' of dtype {} does not fill whole bytes", name, tensor.dtype);

  tensor.begin = (*offsets)[0].get<std::uint64_t>();
  tensor.end = (*offsets)[1].get<std::uint64_t>();
  if (tensor.end < tensor.begin) return fmt::format("tensor '{}' ends before it begins", name);
  const std::uint64_t expected_bytes = total_bits / 8;
  if (tensor.end - tensor.begin != expected_bytes) {
    return fmt::format("tensor '{}' spans {} bytes but its shape and dtype need {}", name, tensor.end - tensor.begin,
                       expected_bytes);
  }
  return std::nullopt;
}

}  // namespace

std::optional<unsigned> dtype_bits(std::string_view dtype) {
  struct Entry {
    std::string_view name;
    unsigned bits;
  };
  static constexpr std::array<Entry, 22> kDtypes{{
      {"BOOL", 8},    {"U8", 8},      {"I8", 8},   {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8},
      {"I16", 16},    {"U16", 16},    {"F16", 16}, {"BF16", 16},   {"I32", 32},    {"U32", 32},
      {"F32", 32},    {"I64", 64},    {"U64", 64}, {"F64", 64},    {"C64", 64},    {"F4", 4},
      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"E8M0", 8}, {"C128", 128},
  }};
  for (const Entry& entry : kDtypes) {
    if (entry.name == dtype) return entry.bits;
  }
  return std::nullopt;
}

HeaderCheck check_safetensors_header(std::uint64_t header_length, std::string_view header_json,
                                     std::uint64_t file_size) {
  if (file_size < 8)
    return failure(fmt::format("truncated: {} bytes, shorter than the 8-byte header length", file_size));
  if (header_length > kMaxHeaderBytes) return failure(fmt::format("header length {} is implausible", header_length));
  if (header_length > file_size - 8) {
    return failure(fmt::format("truncated header: it claims {} bytes but the file has only {} after the prefix",
                               header_length, file_size - 8));
  }
  if (header_json.size() != header_length) return failure("truncated header");
  const nlohmann::json header = nlohmann::json::parse(header_json, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) return failure("the header is not valid JSON");
  if (!header.is_object()) return failure("the header is not a JSON object");

  SafetensorsHeader result;
  result.header_length = header_length;
  result.data_length = file_size - 8 - header_length;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) return failure("__metadata__ is not a JSON object");
      continue;
    }
    TensorInfo tensor;
    if (std::optional<std::string> problem = parse_tensor(name, value, tensor)) return failure(*problem);
    if (tensor.end > result.data_length) {
      return failure(fmt::format("tensor '{}' is out of bounds: it ends at byte {} of a {}-byte data region", name,
                                 tensor.end, result.data_length));
    }
    result.tensors.push_back(std::move(tensor));
  }

  std::sort(result.tensors.begin(), result.tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t covered = 0;
  std::string_view previous_name;
  for (const TensorInfo& tensor : result.tensors) {
    if (tensor.begin < covered) {
      return failure(fmt::format("tensors '{}' and '{}' overlap at byte {}", previous_name, tensor.name, tensor.begin));
    }
    if (tensor.begin > covered) {
      return failure(fmt::format("gap in the data region: bytes {}-{} belong to no tensor (before '{}')", covered,
                                 tensor.begin, tensor.name));
    }
    covered = tensor.end;
    previous_name = tensor.name;
  }
  if (covered != result.data_length) {
    return failure(fmt::format("the tensors cover {} of the {} data bytes: the file is longer than its header says",
                               covered, result.data_length));
  }
  return HeaderCheck{std::move(result), {}};
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
  if (header_length > kMaxHeaderBytes || header_length > file_size - 8) {
    return check_safetensors_header(header_length, {}, file_size);
  }
  std::string json(static_cast<std::size_t>(header_length), '\0');
  std::size_t done = 0;
  while (done < json.size()) {
    const ssize_t n = ::pread(fd.get(), json.data() + done, json.size() - done, static_cast<off_t>(8 + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return failure("truncated header");
    done += static_cast<std::size_t>(n);
  }
  return check_safetensors_header(header_length, json, file_size);
}

}  // namespace hfget::verify
