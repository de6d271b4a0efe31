// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hfget::verify {

struct TensorInfo {
  std::string name;
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0;  // data_offsets, relative to the start of the data region
  std::uint64_t end = 0;
};

/// What a safetensors file's header says, after every structural rule was checked.
struct SafetensorsHeader {
  std::uint64_t header_length = 0;  // the JSON's length, from the first 8 bytes
  std::uint64_t data_length = 0;    // file size − 8 − header_length
  std::vector<TensorInfo> tensors;  // in file order (by offset)

  std::uint64_t tensor_bytes() const noexcept { return data_length; }
};

/// The outcome of checking one file: a header, or the first problem found, in words a user can act on
/// ("truncated header", "tensor 'x' ends at byte 900 beyond the data region of 800 bytes", …).
struct HeaderCheck {
  std::optional<SafetensorsHeader> header;
  std::string problem;
};

/// Bits per element of a safetensors dtype (BF16 → 16, F8_E4M3 → 8, F4 → 4), nullopt if unknown.
std::optional<unsigned> dtype_bits(std::string_view dtype);

/// Checks a header given the 8-byte length prefix's value, the JSON text and the file size: the JSON
/// parses; every dtype is known; every span equals shape × dtype size; spans lie in the data region and,
/// sorted by offset, cover it with no gap or overlap (zero-length spans may share an offset).
HeaderCheck check_safetensors_header(std::uint64_t header_length, std::string_view header_json,
                                     std::uint64_t file_size);

/// Reads the prefix and header of `path` (never the tensor data) and checks them.
HeaderCheck read_safetensors_header(const std::filesystem::path& path);

}  // namespace hfget::verify
