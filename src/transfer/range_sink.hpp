// SPDX-License-Identifier: MIT
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

namespace hfget::transfer {

/// Writes a 2xx body into the task's file at the task's position, up to the task's (possibly lowered) end,
/// and records what it wrote (journal, hash following the prefix). libcurl hands the body over in 16 KiB
/// pieces; they are gathered in the connection's batch buffer and written, journaled and hashed a socket
/// read at a time (at most the batch's capacity): on a fast link an 8th of the system calls and lock round
/// trips, and a kill -9 still loses only what was in flight. Under --max-speed each piece first waits for
/// its turn at `limiter` (in libcurl's write callback, so the socket is read no faster than the limit).
class RangeSink final : public http::BodySink {
 public:
  /// `limiter` nullptr: no limit; `stop` ends a wait at the limiter (the transfer then stops).
  RangeSink(RangeTask& task, std::vector<std::byte>& batch, RateLimiter* limiter = nullptr, std::stop_token stop = {});

  /// The origin the next request goes to: validators (ETags) are compared per server.
  void set_origin(std::string origin) { origin_ = std::move(origin); }

  void on_response_start(const http::HttpResponse& head) override;
  bool on_body(std::span<const std::byte> bytes) override;
  /// What one read from the socket delivered is written together: on a fast link that is hundreds of KiB,
  /// on a slow one a piece or two, so a kill -9 loses no more than before batching.
  void on_read_done() override { flush(); }

  /// Writes what the batch holds at the task's position and records it. Called when the batch is full,
  /// after each read from the socket and after every request, however it ended.
  void flush();

  const std::optional<std::string>& rejection() const noexcept { return rejection_; }
  bool file_changed() const noexcept { return changed_; }
  std::uint64_t received() const noexcept { return received_; }

 private:
  void record(std::uint64_t position, std::span<const std::byte> bytes);

  RangeTask& task_;
  const RemoteFile& file_;
  std::vector<std::byte>& batch_;
  RateLimiter* limiter_;
  std::stop_token stop_;
  std::string origin_;
  std::optional<std::string> rejection_;
  bool changed_ = false;
  std::uint64_t received_ = 0;
};

}  // namespace hfget::transfer
