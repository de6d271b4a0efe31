// SPDX-License-Identifier: MIT
// hfget's chunk layout records (untrusted: read back from disk, where anything may have changed them). An
// accepted record must keep the promises a reuse plan relies on: runs in order, inside the file, none
// overlapping, with chunk lengths a real chunk can have; it must serialize back to the same bytes; and find()
// must answer only spans inside the file.
#include <string>

#include "fuzz_check.hpp"
#include "xet/chunk_layout.hpp"
#include "xet/chunk_stream.hpp"

namespace {

void check(const hfget::xet::ChunkLayout& layout, std::string_view record) {
  std::uint64_t end = 0;
  for (const hfget::xet::ChunkRun& run : layout.runs) {
    HFGET_FUZZ_CHECK(run.xorb_hash.size() == 64);
    HFGET_FUZZ_CHECK(!run.lengths.empty());
    HFGET_FUZZ_CHECK(run.file_offset >= end);
    HFGET_FUZZ_CHECK(run.chunk_end() > run.chunk_begin);
    for (const std::uint32_t length : run.lengths) {
      HFGET_FUZZ_CHECK(length > 0 && length <= hfget::xet::kMaxChunkBytes);
    }
    end = run.file_offset + run.bytes();
    HFGET_FUZZ_CHECK(end <= layout.file_size);
    const auto span = layout.find(run.xorb_hash, run.chunk_begin, run.chunk_end());
    HFGET_FUZZ_CHECK(span && span->offset + span->bytes <= layout.file_size);
  }
  HFGET_FUZZ_CHECK(hfget::xet::serialize_chunk_layout(layout) == record);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view record = hfget::fuzz::as_text(data, size);
  try {
    check(hfget::xet::parse_chunk_layout(record, std::nullopt), record);
  } catch (const hfget::xet::ChunkLayoutError&) {
  }
  return 0;
}
