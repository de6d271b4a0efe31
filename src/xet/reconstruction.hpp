// SPDX-License-Identifier: MIT
// A file's reconstruction, as the CAS answers /v1/reconstructions/{hash} and /v2/reconstructions/{hash}
// (xet-core spec download_protocol.md, api_changes/update_260316_v2_reconstruction_multirange.md): which chunk
// ranges of which xorbs, concatenated in order, make up the file (or the byte range of it that was asked
// for), and the presigned URLs and exact byte ranges to fetch them with. Both versions parse into one shape.
// The JSON is untrusted: hashes, ranges, lengths and URLs are checked here, so that the source fetching the
// terms can rely on every term having a fetch that covers it and on lengths that add up.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hfget::xet {

/// One byte range of a xorb to GET from `url`, with `Range: bytes=<byte_begin>-<byte_end - 1>` exactly (the
/// presigned URL's signature covers it). It holds the serialized chunks [chunk_begin, chunk_end) of the xorb.
struct XorbFetch {
  std::string xorb_hash;  // 64 lowercase hex digits
  std::string url;        // http(s); never sent a token
  std::uint64_t byte_begin = 0;
  std::uint64_t byte_end = 0;  // exclusive (the JSON's url_range.end is inclusive)
  std::uint32_t chunk_begin = 0;
  std::uint32_t chunk_end = 0;  // exclusive
};

/// The chunks [chunk_begin, chunk_end) of a xorb: the next `data_bytes` bytes of the file once decoded.
struct Term {
  std::string xorb_hash;
  std::uint32_t chunk_begin = 0;
  std::uint32_t chunk_end = 0;   // exclusive
  std::uint64_t data_bytes = 0;  // the JSON's unpacked_length
  std::size_t fetch = 0;         // index into Reconstruction::fetches of one that covers the chunks
};

struct Reconstruction {
  /// Bytes of the first term's data that come before the first byte asked for (a ranged request).
  std::uint64_t offset_into_first_range = 0;
  std::vector<Term> terms;
  std::vector<XorbFetch> fetches;
  /// The terms' data_bytes summed: the bytes the terms decode to (offset_into_first_range included).
  std::uint64_t data_bytes() const;
};

/// The answer cannot be used (not JSON, a field missing or of the wrong type, a hash that is not 64 hex
/// digits, an empty or inverted range, a term that no fetch covers, offset_into_first_range not inside the
/// first term, lengths impossible for the chunk count, a URL that is not http(s), more terms than a file can
/// have). The message names the field.
class ReconstructionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A xorb or file hash as the API writes it: 64 lowercase hex digits.
bool is_hash_hex(std::string_view text);

/// {offset_into_first_range, terms: [{hash, unpacked_length, range: {start, end}}],
///  fetch_info: {hash: [{url, url_range: {start, end (inclusive)}, range: {start, end}}]}}
Reconstruction parse_reconstruction_v1(std::string_view json);
/// {offset_into_first_range, terms: [...as V1...], xorbs: {hash: [{url, ranges: [{chunks: {start, end},
///  bytes: {start, end (inclusive)}}]}]}}: each of a URL's ranges becomes a XorbFetch of its own, as hf_xet
///  fetches them by default (HF_XET_CLIENT_ENABLE_MULTIRANGE_FETCHING off: one single-range GET per range).
///  An entry with no ranges is rejected.
Reconstruction parse_reconstruction_v2(std::string_view json);

}  // namespace hfget::xet
