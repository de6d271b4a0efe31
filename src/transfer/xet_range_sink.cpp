// SPDX-License-Identifier: MIT
#include "transfer/xet_range_sink.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "http/content_range.hpp"
#include "util/printable.hpp"

namespace hfget::transfer {

TaskWriter::TaskWriter(RangeTask& task, std::vector<std::byte>& batch, std::uint64_t skip)
    : task_(task), batch_(batch), skip_(skip), stream_offset_(task.position - skip) {
  batch_.clear();
}

void TaskWriter::begin_chunk(std::size_t data_bytes) {
  // A chunk is not split across two writes when it fits whole: what the file holds then ends at a chunk
  // boundary after a kill -9, and the resume's reconstruction starts there, with nothing to fetch twice.
  if (!batch_.empty() && batch_.size() + data_bytes > batch_.capacity()) flush();
}

bool TaskWriter::emit(std::span<const std::byte> data) {
  stream_offset_ += data.size();
  if (skip_ > 0) {
    const auto skipped = static_cast<std::size_t>(std::min<std::uint64_t>(skip_, data.size()));
    skip_ -= skipped;
    data = data.subspan(skipped);
  }
  while (!data.empty() && !reached_end_) {
    // A chunk is not split across two writes when it fits whole: what the file holds then ends at a chunk
    // boundary after a kill -9, and the resume's reconstruction starts there, with nothing to fetch twice.
    if (!batch_.empty() && batch_.size() + data.size() > batch_.capacity()) flush();
    const std::uint64_t next = task_.position + batch_.size();
    const std::uint64_t end = task_.end;
    if (next >= end) {
      reached_end_ = true;
      break;
    }
    const auto room = std::min<std::size_t>(batch_.capacity() - batch_.size(),
                                            static_cast<std::size_t>(std::min<std::uint64_t>(end - next, data.size())));
    batch_.insert(batch_.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(room));
    accepted_ += room;
    data = data.subspan(room);
    if (batch_.size() == batch_.capacity()) flush();
    if (task_.position + batch_.size() >= task_.end) reached_end_ = true;
  }
  return !reached_end_;
}

void TaskWriter::flush() {
  if (batch_.empty()) return;
  struct Emptied {  // written or not (a full disk throws), the batch is done with
    std::vector<std::byte>& batch;
    ~Emptied() { batch.clear(); }
  } emptied{batch_};
  const std::uint64_t position = task_.position;
  const std::uint64_t end = task_.end;  // may have been lowered by a split meanwhile
  const auto length =
      static_cast<std::size_t>(std::min<std::uint64_t>(end > position ? end - position : 0, batch_.size()));
  if (length == 0) return;
  task_.file->store(position, std::span<const std::byte>(batch_.data(), length));
  task_.position = position + length;
  stored_ += length;
}

XetRangeSink::XetRangeSink(const xet::Reconstruction& plan, std::size_t first_term, std::size_t end_term,
                           TaskWriter& writer, RateLimiter* limiter, std::stop_token stop, ChunkKeeper keep,
                           std::uint32_t decode_until, xet::ChunkLayoutBuilder* layout)
    : plan_(plan),
      fetch_(plan.fetches[plan.terms[first_term].fetch]),
      term_(first_term),
      end_term_(end_term),
      next_chunk_(fetch_.chunk_begin),
      decode_until_(std::max(decode_until, plan.terms[end_term - 1].chunk_end)),
      writer_(writer),
      limiter_(limiter),
      stop_(std::move(stop)),
      keep_(std::move(keep)),
      layout_(layout),
      task_(writer.task()),
      decoder_(xet::ChunkPieces{
          .begin = [this](std::uint64_t index, std::uint32_t data_bytes) { begin_chunk(index, data_bytes); },
          .data = [this](std::span<const std::byte> data) { chunk_data(data); },
          .end = [this] { end_chunk(); }}) {}

void XetRangeSink::on_response_start(const http::HttpResponse& head) {
  const std::uint64_t last = fetch_.byte_end - 1;
  if (head.status == 206) {
    const std::string* value = head.header("content-range");
    const std::optional<http::ContentRange> range = value ? http::parse_content_range(*value) : std::nullopt;
    if (!range || range->first != fetch_.byte_begin || range->last != last) {
      rejection_ = fmt::format("Content-Range '{}' is not the xorb bytes {}-{} asked for",
                               util::printable(value ? *value : ""), fetch_.byte_begin, last);
    }
  } else if (fetch_.byte_begin != 0) {
    // A 200 is the whole object: usable only when the range starts it (the body is cut at the range's end).
    rejection_ = fmt::format("the server ignored the Range request (HTTP {}) for xorb bytes {}-{}", head.status,
                             fetch_.byte_begin, last);
  }
}

bool XetRangeSink::on_body(std::span<const std::byte> bytes) {
  if (rejection_ || task_.cancelled) return false;
  if (limiter_ != nullptr && !limiter_->acquire(bytes.size(), stop_)) return false;
  const std::uint64_t wanted = fetch_.byte_end - fetch_.byte_begin;
  const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(wanted - received_, bytes.size()));
  if (done()) {  // the rest of the body is not needed: read to its end if that is cheaper than a new connection
    received_ += take;
    return take == bytes.size() && wanted - received_ <= kDrainBytes;
  }
  received_ += take;
  try {
    decoder_.feed(bytes.first(take));
  } catch (const xet::DecodeError& error) {
    rejection_ = fmt::format("xorb {} bytes {}-{}: {}", fetch_.xorb_hash.substr(0, 12), fetch_.byte_begin,
                             fetch_.byte_end - 1, error.what());
    return false;
  }
  // Returning false aborts the transfer, and libcurl then closes the connection: only when more than a
  // drain's worth of unwanted bytes is still to come (a body longer than the range is never read).
  return take == bytes.size() && (!done() || wanted - received_ <= kDrainBytes);
}

void XetRangeSink::begin_chunk(std::uint64_t index, std::uint32_t data_bytes) {
  in_chunk_ = writing_chunk_ = keeping_chunk_ = false;
  if (done()) return;  // the chunks past the last term, or past the task's end, are not needed
  const std::uint64_t chunk = fetch_.chunk_begin + index;
  in_chunk_ = true;
  chunk_ = chunk;
  keeping_chunk_ = keep_ && keep_.wants(static_cast<std::uint32_t>(chunk), data_bytes);
  if (keeping_chunk_) kept_chunk_.clear();
  while (term_ < end_term_ && chunk >= plan_.terms[term_].chunk_end) close_term();
  if (term_ == end_term_) return;
  const xet::Term& term = plan_.terms[term_];
  if (chunk < term.chunk_begin) return;  // the fetch entry starts before the term
  // The header's size is checked before any of the chunk's bytes are written.
  term_bytes_ += data_bytes;
  if (term_bytes_ > term.data_bytes) {
    throw xet::DecodeError(
        fmt::format("the chunks of term {} decode to more than its {} bytes", term_, term.data_bytes));
  }
  // Where the chunk lies in the file, whether or not this range writes all of it (a range that starts or ends
  // inside a chunk writes part, and its neighbour the rest): the record is kept only for a file whose
  // SHA-256 matched, so it says what the file holds.
  if (layout_ != nullptr) {
    layout_->add(writer_.stream_offset(), fetch_.xorb_hash, static_cast<std::uint32_t>(chunk), data_bytes);
  }
  writer_.begin_chunk(data_bytes);
  writing_chunk_ = true;
}

void XetRangeSink::chunk_data(std::span<const std::byte> data) {
  if (keeping_chunk_) kept_chunk_.insert(kept_chunk_.end(), data.begin(), data.end());
  if (writing_chunk_) writer_.emit(data);
}

void XetRangeSink::end_chunk() {
  if (!in_chunk_) return;
  in_chunk_ = false;
  next_chunk_ = chunk_ + 1;  // only now: done() must not stop the body inside a chunk still wanted
  if (keeping_chunk_) keep_.keep(static_cast<std::uint32_t>(chunk_), kept_chunk_);
  keeping_chunk_ = false;
  if (!writing_chunk_) return;
  writing_chunk_ = false;
  if (chunk_ + 1 == plan_.terms[term_].chunk_end) close_term();
}

void XetRangeSink::close_term() {
  const xet::Term& term = plan_.terms[term_];
  if (term_bytes_ != term.data_bytes) {
    throw xet::DecodeError(fmt::format("the chunks of term {} decode to {} bytes, the reconstruction says {}", term_,
                                       term_bytes_, term.data_bytes));
  }
  ++term_;
  term_bytes_ = 0;
}

bool XetRangeSink::finished() {
  writer_.flush();
  if (rejection_) return false;
  if (writer_.reached_end() || term_ == end_term_) return true;
  try {
    decoder_.finish();
  } catch (const xet::DecodeError& error) {
    rejection_ = fmt::format("xorb {} bytes {}-{}: {}", fetch_.xorb_hash.substr(0, 12), fetch_.byte_begin,
                             fetch_.byte_end - 1, error.what());
    return false;
  }
  // The whole range arrived and decoded, but its chunks did not reach the end of the last term.
  if (received_ == fetch_.byte_end - fetch_.byte_begin) {
    rejection_ = fmt::format("xorb {} bytes {}-{} hold fewer chunks than the reconstruction's terms need",
                             fetch_.xorb_hash.substr(0, 12), fetch_.byte_begin, fetch_.byte_end - 1);
  }
  return false;
}

}  // namespace hfget::transfer
