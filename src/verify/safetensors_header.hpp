// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hfget::verify {

/// The safetensors dtypes, in one byte (a header of 200 K tensors repeats a handful of them).
enum class Dtype : std::uint8_t {
  kBool,
  kU8,
  kI8,
  kF8E5M2,
  kF8E4M3,
  kF8E8M0,
  kI16,
  kU16,
  kF16,
  kBF16,
  kI32,
  kU32,
  kF32,
  kI64,
  kU64,
  kF64,
  kC64,
  kF4,
  kF6E2M3,
  kF6E3M2,
  kE8M0,
  kC128,
};

/// "BF16" → Dtype::kBF16; nullopt if unknown (names are case-sensitive, as in the format).
std::optional<Dtype> parse_dtype(std::string_view name);
/// Dtype::kBF16 → "BF16".
std::string_view dtype_name(Dtype dtype);
/// Bits per element: BF16 → 16, F8_E4M3 → 8, F4 → 4.
unsigned dtype_bits(Dtype dtype);
/// Bits per element of a dtype name, nullopt if unknown.
std::optional<unsigned> dtype_bits(std::string_view dtype);

/// One tensor, as compact as the checks allow: its shape is checked against its span and then dropped, and
/// its name lives in SafetensorsHeader::names.
struct TensorInfo {
  std::uint64_t begin = 0;  // data_offsets, relative to the start of the data region
  std::uint64_t end = 0;
  std::uint32_t name_offset = 0;  // the name is names.substr(name_offset, name_size)
  std::uint32_t name_size = 0;
  Dtype dtype = Dtype::kU8;
};

/// What a safetensors file's header says, after every structural rule was checked.
struct SafetensorsHeader {
  std::uint64_t header_length = 0;  // the JSON's length, from the first 8 bytes
  std::uint64_t data_length = 0;    // file size − 8 − header_length
  std::vector<TensorInfo> tensors;  // sorted by offset
  std::string names;                // every tensor's name, back to back

  std::uint64_t tensor_bytes() const noexcept { return data_length; }
  std::string_view name_of(const TensorInfo& tensor) const noexcept {
    return std::string_view(names).substr(tensor.name_offset, tensor.name_size);
  }
};

/// The outcome of checking one file: a header, or the first problem found, in words a user can act on
/// ("truncated header", "tensor 'x' ends at byte 900 beyond the data region of 800 bytes", …).
struct HeaderCheck {
  std::optional<SafetensorsHeader> header;
  std::string problem;
};

/// Checks a header given the 8-byte length prefix's value, the JSON text and the file size: the JSON
/// parses, nested at most 16 deep; every dtype is known; every span equals shape × dtype size; no tensor
/// name appears twice; spans lie in the data region and, sorted by offset, cover it with no gap or overlap
/// (zero-length spans may share an offset). The JSON is parsed as events, never as a tree: memory is the
/// tensors' names plus 32 bytes per tensor, whatever else the header holds.
HeaderCheck check_safetensors_header(std::uint64_t header_length, std::string_view header_json,
                                     std::uint64_t file_size);

/// Reads the prefix and header of `path` (never the tensor data) and checks them, streaming the header
/// from the file through a 64 KiB window rather than reading it into memory first.
HeaderCheck read_safetensors_header(const std::filesystem::path& path);

}  // namespace hfget::verify
