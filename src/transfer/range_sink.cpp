// SPDX-License-Identifier: MIT
// A 206 must continue exactly where this connection stands, for the size the listing promised; anything
// else is refused rather than spliced. Another ETag than the one the file's bytes were written with means
// the file changed on the server: nothing of the answer is written, and the file starts over.
#include "transfer/range_sink.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "hfget/error.hpp"
#include "http/content_range.hpp"
#include "util/printable.hpp"

namespace hfget::transfer {

RangeSink::RangeSink(RangeTask& task, std::vector<std::byte>& batch, RateLimiter* limiter, std::stop_token stop)
    : task_(task), file_(task.file->remote()), batch_(batch), limiter_(limiter), stop_(std::move(stop)) {
  batch_.clear();
}

void RangeSink::on_response_start(const http::HttpResponse& head) {
  const std::uint64_t position = task_.position;
  if (!task_.file->accept_validator(origin_, head.header("etag"))) {
    // Also what a server answers to If-Range when the file changed: the whole new file, with a 200.
    rejection_ = fmt::format("the file changed on the server (another ETag, HTTP {}); starting it over", head.status);
    changed_ = true;
  } else if (head.status == 206) {
    const std::string* value = head.header("content-range");
    const std::optional<http::ContentRange> range = value ? http::parse_content_range(*value) : std::nullopt;
    if (!range || !http::continues_partial_file(*range, position, file_.size)) {
      rejection_ = fmt::format("Content-Range '{}' does not continue the file at byte {} of {}",
                               util::printable(value ? *value : ""), position, file_.size);
    }
  } else if (position > 0) {
    rejection_ = fmt::format("the server ignored the Range request (HTTP {}) at byte {}", head.status, position);
  }
}

bool RangeSink::on_body(std::span<const std::byte> bytes) {
  if (rejection_ || task_.cancelled) return false;
  // Stopped while waiting: the fetcher sees the stop and reports the file interrupted.
  if (limiter_ != nullptr && !limiter_->acquire(bytes.size(), stop_)) return false;
  const std::uint64_t next = task_.position + batch_.size();
  const std::uint64_t end = task_.end;
  const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(end > next ? end - next : 0, bytes.size()));
  for (std::span<const std::byte> rest = bytes.first(take); !rest.empty();) {
    const std::size_t piece = std::min(batch_.capacity() - batch_.size(), rest.size());
    batch_.insert(batch_.end(), rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(piece));
    rest = rest.subspan(piece);
    if (batch_.size() == batch_.capacity()) flush();
  }
  received_ += take;
  // Past the end: the rest belongs to another connection (or the server sent more than the listing says).
  return take == bytes.size();
}

void RangeSink::flush() {
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
  const std::span<const std::byte> bytes(batch_.data(), length);
  try {
    record(position, bytes);
  } catch (const Error& error) {
    if (error.code() != ErrorCode::kDiskFull) throw;
    // Part of the batch may have fit: keep exactly that much for the resume, in pieces.
    constexpr std::size_t kPiece = 16 << 10;
    for (std::size_t done = 0; done < length; done += kPiece) {
      record(position + done, bytes.subspan(done, std::min(kPiece, length - done)));  // throws where it stops
    }
  }
}

void RangeSink::record(std::uint64_t position, std::span<const std::byte> bytes) {
  task_.file->store(position, bytes);
  task_.position = position + bytes.size();
}

}  // namespace hfget::transfer
