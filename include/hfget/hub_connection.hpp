// SPDX-License-Identifier: MIT
// How hfget reaches the Hub, as one value. The endpoint, the token, the transfer limits and the retry policy
// used to ride in a struct per command (download, verify, ls) and again in the Hub client's and the fetcher's
// settings, each copied field by field from the next: a flag added to one could be forgotten in another (so
// `verify --online` once ignored --ca-bundle). The CLI builds this once per command (cli/hub_options.cpp) and
// every request of that command, to the Hub's API or to the CDN, is made with it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "hfget/secret.hpp"

namespace hfget {

struct HubConnection {
  std::string endpoint;  // "https://huggingface.co" (HubEnvironment's endpoint), no trailing '/'
  // Where the endpoint came from ("HF_ENDPOINT=…", "--endpoint …"; empty: the default), named when it cannot
  // be reached or does not answer like a Hub.
  std::string endpoint_origin;
  Secret token;  // sent only to the endpoint's own host, never to a CDN or a host a redirect names

  // The transfer limits (curl's --speed-limit/--speed-time): a transfer averaging under `speed_limit`
  // bytes/s for `stall_timeout` is abandoned and retried; 0 keeps only the stall rule.
  std::chrono::seconds stall_timeout{60};
  std::uint64_t speed_limit = 1024;
  std::optional<std::filesystem::path> ca_bundle;  // --ca-bundle, CURL_CA_BUNDLE, REQUESTS_CA_BUNDLE, SSL_CERT_FILE
  std::optional<std::filesystem::path> ca_path;    // SSL_CERT_DIR

  // The retry policy: attempts per file or Hub request, counted since the last progress (--retries + 1);
  // the first backoff; and the time one may spend without progress, waits included (0: no limit).
  int max_attempts = 8;
  std::chrono::milliseconds retry_base_delay{1000};
  std::chrono::seconds retry_max_time{600};
};

/// The attempts `--retries N` allows (N + 1), or Error{kUsage} when N is outside 0..100.
int max_attempts_for_retries(int retries);

/// Error{kUsage}, naming the flag, for limits no run could work with: attempts outside 1..101 (--retries
/// 0..100), a stall timeout under a second, a negative --retry-max-time. download, verify and list_repo
/// call it first; the CLI calls it as it builds the value, so that a bad flag fails before a run starts.
void check_hub_connection(const HubConnection& hub);

}  // namespace hfget
