// SPDX-License-Identifier: MIT
// The body of one xorb range GET, turned into file bytes: serialized chunks are decoded as they arrive
// (xet/chunk_stream.hpp), each chunk is matched to the reconstruction term it belongs to, and the terms' data
// is written into the file at the range task's position, up to the task's (possibly lowered) end. One GET can
// serve several consecutive terms of the same fetch entry. What cannot be trusted stops the transfer before a
// byte of it is written: an answer that is not exactly the range asked for, a malformed chunk, a term that
// decodes to another length than the reconstruction says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "http/transport.hpp"
#include "transfer/range_task.hpp"
#include "transfer/rate_limiter.hpp"
#include "xet/chunk_stream.hpp"
#include "xet/reconstruction.hpp"

namespace hfget::transfer {

class XetRangeSink final : public http::BodySink {
 public:
  /// Serves terms [first_term, end_term) of `plan`, all covered by the same fetch entry and contiguous in its
  /// chunks; `skip` bytes of the first term's data come before the task's position (offset_into_first_range).
  /// `batch` is the connection's write buffer (its capacity is kept).
  XetRangeSink(RangeTask& task, const xet::Reconstruction& plan, std::size_t first_term, std::size_t end_term,
               std::uint64_t skip, std::vector<std::byte>& batch, RateLimiter* limiter, std::stop_token stop);

  void on_response_start(const http::HttpResponse& head) override;
  bool on_body(std::span<const std::byte> bytes) override;
  void on_read_done() override { flush(); }

  /// Writes what the batch holds. Called after each read and after the request, however it ended.
  void flush();
  /// After the request: true when every term was served, or the task's end was reached. Otherwise the body
  /// ended early or was refused, and rejection() may say why.
  bool finished();

  const std::optional<std::string>& rejection() const noexcept { return rejection_; }
  std::uint64_t received() const noexcept { return received_; }
  std::uint64_t stored() const noexcept { return stored_; }

 private:
  void on_chunk(std::uint64_t index, std::span<const std::byte> data);
  void close_term();
  void emit(std::span<const std::byte> data);

  RangeTask& task_;
  const xet::Reconstruction& plan_;
  const xet::XorbFetch& fetch_;
  std::size_t term_;  // the term being decoded
  std::size_t end_term_;
  std::uint64_t term_bytes_ = 0;  // decoded for the current term so far
  std::uint64_t skip_;
  std::vector<std::byte>& batch_;
  RateLimiter* limiter_;
  std::stop_token stop_;
  xet::ChunkStreamDecoder decoder_;
  std::optional<std::string> rejection_;
  bool reached_end_ = false;  // the task's end is written: the rest of the body is not needed
  std::uint64_t received_ = 0;
  std::uint64_t stored_ = 0;
};

}  // namespace hfget::transfer
