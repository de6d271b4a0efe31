// SPDX-License-Identifier: MIT
// A safetensors header (untrusted: any downloaded file). Input: 8 bytes little-endian data-region length,
// then the JSON header text exactly as it sits in the file. The target checks it as the header of a file of
// 8 + JSON length + data length bytes, and again with inconsistent lengths to reach the truncation paths;
// then it writes the same file to a memfd (the data region sparse) and reads it back through
// read_safetensors_header, whose streamed parse must agree with the in-memory one.

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "hfget/error.hpp"
#include "verify/safetensors_header.hpp"

namespace {

using hfget::verify::HeaderCheck;

void check(std::uint64_t header_length, std::string_view json, std::uint64_t file_size) {
  const HeaderCheck result = hfget::verify::check_safetensors_header(header_length, json, file_size);
  HFGET_FUZZ_CHECK(result.header.has_value() != !result.problem.empty());
  if (!result.header) return;
  const hfget::verify::SafetensorsHeader& header = *result.header;
  HFGET_FUZZ_CHECK(header.header_length == header_length);
  HFGET_FUZZ_CHECK(8 + header.header_length + header.data_length == file_size);
  // Sorted by offset, the spans tile the data region; every name lies in the name buffer, once.
  std::uint64_t covered = 0;
  std::vector<std::string_view> names;
  for (const hfget::verify::TensorInfo& tensor : header.tensors) {
    HFGET_FUZZ_CHECK(tensor.begin == covered && tensor.begin <= tensor.end);
    HFGET_FUZZ_CHECK(hfget::verify::parse_dtype(hfget::verify::dtype_name(tensor.dtype)) == tensor.dtype);
    HFGET_FUZZ_CHECK(std::uint64_t{tensor.name_offset} + tensor.name_size <= header.names.size());
    names.push_back(header.name_of(tensor));
    covered = tensor.end;
  }
  HFGET_FUZZ_CHECK(covered == header.data_length);
  std::sort(names.begin(), names.end());
  HFGET_FUZZ_CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
}

void check_file(std::uint64_t data_length, std::string_view json) {
  static hfget::fuzz::MemoryFile file("hfget-fuzz-safetensors");
  std::string content(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) content[i] = static_cast<char>((json.size() >> (8 * i)) & 0xFFU);
  content += json;
  const std::uint64_t file_size = content.size() + data_length;
  const HeaderCheck streamed = hfget::verify::read_safetensors_header(file.write(content, file_size));
  const HeaderCheck in_memory = hfget::verify::check_safetensors_header(json.size(), json, file_size);
  HFGET_FUZZ_CHECK(streamed.problem == in_memory.problem);
  HFGET_FUZZ_CHECK(streamed.header.has_value() == in_memory.header.has_value());
  if (streamed.header) {
    HFGET_FUZZ_CHECK(streamed.header->tensors.size() == in_memory.header->tensors.size());
    HFGET_FUZZ_CHECK(streamed.header->names == in_memory.header->names);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 8) return 0;
  std::uint64_t data_length = 0;
  for (std::size_t i = 0; i < 8; ++i) data_length |= std::uint64_t{data[i]} << (8 * i);
  const std::string_view json = hfget::fuzz::as_text(data + 8, size - 8);
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t file_size = data_length > kMax - 8 - json.size() ? kMax : 8 + json.size() + data_length;
  try {
    check(json.size(), json, file_size);
    check(json.size(), json, 8 + json.size());   // no data region
    check(data_length, json, file_size);         // a length prefix that disagrees with the text
    check(json.size() + 1, json, file_size);     // truncated header
    check(json.size(), json, data_length);       // a file smaller than it says
    check_file(data_length % (1U << 30), json);  // sparse: a data region of up to 1 GiB costs nothing
  } catch (const hfget::Error&) {
  }
  return 0;
}
