// SPDX-License-Identifier: MIT
// The body of one xorb range GET, turned into file bytes: serialized chunks are decoded as they arrive
// (xet/chunk_stream.hpp), each chunk is matched to the reconstruction term it belongs to, and the terms' data
// is written into the file at the range task's position, up to the task's (possibly lowered) end. One GET can
// serve several consecutive terms of the same fetch entry. What cannot be trusted stops the transfer at the
// first bad byte and is never written: an answer that is not exactly the range asked for (nothing of it is
// written), a malformed chunk, a term whose chunks decode to another length than the reconstruction says
// (checked from each chunk's header, before its bytes). What was handed on before it is kept: the chunks
// decoded whole, and the bytes of a stored chunk as they arrived (its payload is its data, passed on without
// a copy; a body cut inside it leaves part of it, which a resume fetches again from the chunk's start). The
// file's SHA-256 decides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "http/transport.hpp"
#include "transfer/range_task.hpp"
#include "transfer/rate_limiter.hpp"
#include "xet/chunk_layout.hpp"
#include "xet/chunk_stream.hpp"
#include "xet/reconstruction.hpp"

namespace hfget::transfer {

/// Writes file bytes at the task's position, up to its (possibly lowered) end, through the connection's
/// batch buffer: what XetRangeSink decodes, and a term's bytes kept from earlier in the same reconstruction.
class TaskWriter {
 public:
  /// `skip` bytes of what is emitted first are dropped (the reconstruction's offset_into_first_range).
  TaskWriter(RangeTask& task, std::vector<std::byte>& batch, std::uint64_t skip);
  /// A chunk of `data_bytes` is about to be emitted (in one piece or several): the batch is written first
  /// when the chunk would not fit in it whole.
  void begin_chunk(std::size_t data_bytes);
  /// Returns false once the task's end is reached: the rest is not needed.
  bool emit(std::span<const std::byte> data);
  /// Writes what the batch holds (journal, hash, progress: IncomingFile::store).
  void flush();
  bool reached_end() const noexcept { return reached_end_; }
  /// The file offset of the next byte emit() is given, counting the skipped ones and those past the end.
  std::uint64_t stream_offset() const noexcept { return stream_offset_; }
  RangeTask& task() const noexcept { return task_; }
  std::uint64_t stored() const noexcept { return stored_; }
  /// Bytes emit() took so far (after the skipped ones, up to the task's end): stored, or to be at flush().
  std::uint64_t accepted() const noexcept { return accepted_; }

 private:
  RangeTask& task_;
  std::vector<std::byte>& batch_;
  std::uint64_t skip_;
  bool reached_end_ = false;
  std::uint64_t stored_ = 0;
  std::uint64_t accepted_ = 0;
  std::uint64_t stream_offset_;
};

/// Is offered every chunk the fetch decodes (its index in the xorb, its data), whether a term of this run
/// needs it or not: a later term of the same reconstruction may name it again (a file with repeated content).
/// `wants` is asked first, with the chunk's size, so that only the chunks kept are gathered whole.
struct ChunkKeeper {
  std::function<bool(std::uint32_t chunk, std::uint32_t data_bytes)> wants;
  std::function<void(std::uint32_t chunk, std::span<const std::byte> data)> keep;
  explicit operator bool() const noexcept { return static_cast<bool>(wants) && static_cast<bool>(keep); }
};

class XetRangeSink final : public http::BodySink {
 public:
  /// Bytes of a body still to come that are read and dropped, once the terms are served, rather than
  /// aborting the transfer: an abort closes the connection, and a new one costs a handshake (TLS: two round
  /// trips) and a slow start, more than reading this much on any link the tool is for.
  static constexpr std::uint64_t kDrainBytes = 1 << 20;

  /// Serves terms [first_term, end_term) of `plan`, all covered by the same fetch entry and contiguous in its
  /// chunks, into `writer`. `keep` (if set) is offered every decoded chunk.
  /// `decode_until`: the chunk index (exclusive) the fetch is decoded up to even past the last term, for `keep`
  /// (a later term names chunks the fetch holds after this run's terms); 0: the last term's end.
  /// `layout` (if set) is told each chunk decoded for a term and its offset (the file's chunk layout record).
  XetRangeSink(const xet::Reconstruction& plan, std::size_t first_term, std::size_t end_term, TaskWriter& writer,
               RateLimiter* limiter, std::stop_token stop, ChunkKeeper keep = {}, std::uint32_t decode_until = 0,
               xet::ChunkLayoutBuilder* layout = nullptr);

  void on_response_start(const http::HttpResponse& head) override;
  bool on_body(std::span<const std::byte> bytes) override;
  void on_read_done() override { writer_.flush(); }

  /// After the request: true when every term was served, or the task's end was reached. Otherwise the body
  /// ended early or was refused, and rejection() may say why.
  bool finished();

  const std::optional<std::string>& rejection() const noexcept { return rejection_; }
  std::uint64_t received() const noexcept { return received_; }

 private:
  // A chunk's data, as the decoder hands it on (a stored chunk in pieces as they arrive).
  void begin_chunk(std::uint64_t index, std::uint32_t data_bytes);
  void chunk_data(std::span<const std::byte> data);
  void end_chunk();
  void close_term();
  bool done() const { return writer_.reached_end() || (term_ == end_term_ && next_chunk_ >= decode_until_); }

  const xet::Reconstruction& plan_;
  const xet::XorbFetch& fetch_;
  std::size_t term_;  // the term being decoded
  std::size_t end_term_;
  std::uint64_t term_bytes_ = 0;  // decoded for the current term so far
  std::uint64_t next_chunk_ = 0;  // the index in the xorb of the next chunk to decode
  std::uint64_t chunk_ = 0;       // the index in the xorb of the chunk being handed on
  bool in_chunk_ = false;         // begin_chunk took that chunk (it was not past what is needed)
  bool writing_chunk_ = false;    // a term of this run needs the chunk being handed on
  bool keeping_chunk_ = false;    // keep_ wants it: gathered in kept_chunk_
  std::vector<std::byte> kept_chunk_;
  std::uint32_t decode_until_;
  TaskWriter& writer_;
  RateLimiter* limiter_;
  std::stop_token stop_;
  ChunkKeeper keep_;
  xet::ChunkLayoutBuilder* layout_;
  RangeTask& task_;
  xet::ChunkStreamDecoder decoder_;
  std::optional<std::string> rejection_;
  std::uint64_t received_ = 0;
};

}  // namespace hfget::transfer
