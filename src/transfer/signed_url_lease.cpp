// SPDX-License-Identifier: MIT
#include "transfer/signed_url_lease.hpp"

#include <chrono>

namespace hfget::transfer {

SignedUrlLease::Lease SignedUrlLease::lease(const std::stop_token& stop) {
  // Bounded: a resolve that hangs costs the others this long, then they ask the Hub themselves.
  constexpr auto kPatience = std::chrono::seconds(5);
  std::unique_lock lock(mutex_);
  if (!one_resolve_at_a_time_) return {cdn_url_, false};
  if (cdn_url_.empty() && resolving_) {
    changed_.wait_for(lock, stop, kPatience, [this] { return !cdn_url_.empty() || !resolving_; });
  }
  if (!cdn_url_.empty()) return {cdn_url_, false};
  const bool first = !resolving_;
  resolving_ = true;
  return {"", first};
}

void SignedUrlLease::set(const std::string& url) {
  {
    const std::lock_guard guard(mutex_);
    cdn_url_ = url;
    resolving_ = false;
  }
  changed_.notify_all();
}

void SignedUrlLease::forget(const std::string& url) {
  const std::lock_guard guard(mutex_);
  if (cdn_url_ == url) cdn_url_.clear();
}

void SignedUrlLease::resolve_finished() {
  {
    const std::lock_guard guard(mutex_);
    resolving_ = false;
  }
  changed_.notify_all();
}

}  // namespace hfget::transfer
