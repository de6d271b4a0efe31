// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "transfer/connection_budget.hpp"
#include "transfer/incoming_file.hpp"

namespace hfget::transfer {

class FileSource;

/// A range of one file on one connection: the unit of work the scheduler hands out and a source's connection
/// fetches. `end` may be lowered by the scheduler while the transfer runs (it hands the tail to an idle
/// connection); `position` says how far this one got.
struct RangeTask {
  IncomingFile* file = nullptr;        // where the bytes go
  FileSource* source = nullptr;        // the file's state in the byte source that fetches it
  ConnectionBudget* budget = nullptr;  // where the source reports a refused connection
  std::size_t file_index = 0;          // the scheduler's index of the file
  std::uint64_t begin = 0;
  std::atomic<std::uint64_t> end{0};
  std::atomic<std::uint64_t> position{0};
  std::atomic<bool> cancelled{false};  // the file failed elsewhere: stop at the next write
};

}  // namespace hfget::transfer
