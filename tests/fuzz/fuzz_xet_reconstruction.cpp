// SPDX-License-Identifier: MIT
// The CAS's reconstruction answers (untrusted), V1 and V2. An accepted answer must keep the parser's promises
// to the Xet source: each term has a fetch of its xorb covering its chunks, ranges are non-empty, lengths are
// possible for their chunk counts, the offset lies inside the first term and every URL is http(s).
#include <string>

#include "fuzz_check.hpp"
#include "xet/chunk_stream.hpp"
#include "xet/reconstruction.hpp"

namespace {

void check(const hfget::xet::Reconstruction& reconstruction) {
  using hfget::xet::kMaxChunkBytes;
  for (const hfget::xet::XorbFetch& fetch : reconstruction.fetches) {
    HFGET_FUZZ_CHECK(fetch.xorb_hash.size() == 64);
    HFGET_FUZZ_CHECK(fetch.url.rfind("http://", 0) == 0 || fetch.url.rfind("https://", 0) == 0);
    HFGET_FUZZ_CHECK(fetch.byte_begin < fetch.byte_end);
    HFGET_FUZZ_CHECK(fetch.chunk_begin < fetch.chunk_end);
  }
  std::uint64_t total = 0;
  for (const hfget::xet::Term& term : reconstruction.terms) {
    HFGET_FUZZ_CHECK(term.fetch < reconstruction.fetches.size());
    const hfget::xet::XorbFetch& fetch = reconstruction.fetches[term.fetch];
    HFGET_FUZZ_CHECK(fetch.xorb_hash == term.xorb_hash);
    HFGET_FUZZ_CHECK(fetch.chunk_begin <= term.chunk_begin && term.chunk_end <= fetch.chunk_end);
    HFGET_FUZZ_CHECK(term.chunk_begin < term.chunk_end);
    const std::uint64_t chunks = term.chunk_end - term.chunk_begin;
    HFGET_FUZZ_CHECK(term.data_bytes >= chunks && term.data_bytes <= chunks * kMaxChunkBytes);
    HFGET_FUZZ_CHECK(total + term.data_bytes >= total);
    total += term.data_bytes;
  }
  HFGET_FUZZ_CHECK(reconstruction.data_bytes() == total);
  if (reconstruction.terms.empty()) {
    HFGET_FUZZ_CHECK(reconstruction.offset_into_first_range == 0);
  } else {
    HFGET_FUZZ_CHECK(reconstruction.offset_into_first_range < reconstruction.terms.front().data_bytes);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = hfget::fuzz::as_text(data, size);
  try {
    check(hfget::xet::parse_reconstruction_v1(text));
  } catch (const hfget::xet::ReconstructionError&) {
  }
  try {
    check(hfget::xet::parse_reconstruction_v2(text));
  } catch (const hfget::xet::ReconstructionError&) {
  }
  return 0;
}
