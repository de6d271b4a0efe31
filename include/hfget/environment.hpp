// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "hfget/secret.hpp"

namespace hfget {

/// Settings read from the environment with the precedence huggingface_hub uses, so that hfget and the Python
/// client agree on where the cache is and which token and endpoint apply. Read once, before threads start.
struct HubEnvironment {
  std::filesystem::path hf_home;        // HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface
  std::filesystem::path hub_cache;      // HF_HUB_CACHE, else HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub
  std::string endpoint;                 // HF_ENDPOINT without trailing '/', else https://huggingface.co
  std::string endpoint_origin;          // "HF_ENDPOINT=<value>" when that variable set it, else empty
  Secret token;                         // HF_TOKEN, else HUGGING_FACE_HUB_TOKEN, else the token file
  bool offline = false;                 // HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE)
  bool progress_bars_disabled = false;  // HF_HUB_DISABLE_PROGRESS_BARS
  bool symlinks_disabled = false;       // HF_HUB_DISABLE_SYMLINKS: cache snapshots hold real files, not links
  bool xet_disabled = false;            // HF_HUB_DISABLE_XET: Xet-stored files are fetched over the LFS bridge
  std::optional<std::filesystem::path> ca_bundle;  // CURL_CA_BUNDLE, else SSL_CERT_FILE
  std::optional<std::filesystem::path> ca_path;    // SSL_CERT_DIR
  /// HFGET_RETRY_BASE_MS, test-only: the first backoff delay (default 1 s); the test suite shortens it.
  std::chrono::milliseconds retry_base_delay{1000};

  /// Throws Error{kUsage} for a malformed HFGET_RETRY_BASE_MS.
  static HubEnvironment from_process_environment();
};

/// The token as the Hub client cleans it: every CR and LF removed, surrounding whitespace stripped.
std::string clean_token(std::string raw);

}  // namespace hfget
