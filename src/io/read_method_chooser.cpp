// SPDX-License-Identifier: MIT
#include "io/read_method_chooser.hpp"

namespace hfget::io {
namespace {

ReadMethod other(ReadMethod method) {
  return method == ReadMethod::kMapped ? ReadMethod::kCopied : ReadMethod::kMapped;
}

// An eighth for the newest window: one odd window (an interrupt storm, a page the disk was slow to give)
// costing twice the usual does not flip a choice made on a 15% difference. A lasting change to the method in
// use shows within a few windows; one to the other method within a few rechecks.
constexpr double kNewestWeight = 0.125;

}  // namespace

ReadMethodChooser& ReadMethodChooser::process_wide() {
  static ReadMethodChooser chooser;
  return chooser;
}

ReadMethod ReadMethodChooser::choose(std::uint64_t window_bytes) {
  if (fixed_) return *fixed_;
  if (window_bytes < kMeasuredWindowBytes) return ReadMethod::kCopied;
  const std::lock_guard lock(mutex_);
  ++choices_;
  Cost& mapped = cost(ReadMethod::kMapped);
  Cost& copied = cost(ReadMethod::kCopied);
  ReadMethod method = ReadMethod::kMapped;
  if (!mapped.nanoseconds_per_byte || !copied.nanoseconds_per_byte) {
    // Tries, not measurements: two threads starting together then take one method each.
    method = mapped.tries <= copied.tries ? ReadMethod::kMapped : ReadMethod::kCopied;
  } else {
    method = *copied.nanoseconds_per_byte < *mapped.nanoseconds_per_byte ? ReadMethod::kCopied : ReadMethod::kMapped;
    if (choices_ % kRecheckEvery == 0) method = other(method);
  }
  ++cost(method).tries;
  return method;
}

void ReadMethodChooser::record(ReadMethod method, std::uint64_t bytes, std::chrono::nanoseconds cpu_time) {
  if (fixed_ || bytes < kMeasuredWindowBytes) return;
  const double sample = static_cast<double>(cpu_time.count()) / static_cast<double>(bytes);
  const std::lock_guard lock(mutex_);
  std::optional<double>& average = cost(method).nanoseconds_per_byte;
  average = average ? (1 - kNewestWeight) * *average + kNewestWeight * sample : sample;
}

}  // namespace hfget::io
