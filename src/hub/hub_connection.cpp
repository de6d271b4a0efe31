// SPDX-License-Identifier: MIT
// The checks of a Hub connection's limits, and the libcurl settings made from it: one place for each, so
// that download, verify and ls cannot disagree on what --retries 101 or a CA bundle means.
#include "hfget/hub_connection.hpp"

#include "hfget/error.hpp"
#include "hub/hub_client.hpp"

namespace hfget {

namespace {

constexpr int kMaxRetries = 100;

[[noreturn]] void throw_retries_out_of_range() {
  throw Error(ErrorCode::kUsage, "--retries must be between 0 and 100");
}

}  // namespace

int max_attempts_for_retries(int retries) {
  if (retries < 0 || retries > kMaxRetries) throw_retries_out_of_range();
  return retries + 1;
}

void check_hub_connection(const HubConnection& hub) {
  if (hub.max_attempts < 1 || hub.max_attempts > kMaxRetries + 1) throw_retries_out_of_range();
  if (hub.stall_timeout < std::chrono::seconds(1)) {
    throw Error(ErrorCode::kUsage, "--stall-timeout must be at least 1 second");
  }
  if (hub.retry_max_time < std::chrono::seconds(0)) {
    throw Error(ErrorCode::kUsage, "--retry-max-time must be 0 or more seconds");
  }
}

namespace hub {

http::TransportSettings transport_settings(const HubConnection& connection) {
  http::TransportSettings transport;
  transport.stall_timeout = connection.stall_timeout;
  transport.speed_limit = connection.speed_limit;
  transport.ca_bundle = connection.ca_bundle;
  transport.ca_path = connection.ca_path;
  return transport;
}

}  // namespace hub

}  // namespace hfget
