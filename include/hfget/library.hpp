// SPDX-License-Identifier: MIT
#pragma once

namespace hfget {

/// Process-wide set-up of the libraries hfget uses (libcurl's global init). Create one at a time, while no
/// other thread runs: main() holds one for the command, and `--detach` one for its checks before the fork.
/// It cleans up when destroyed.
class LibraryInit {
 public:
  LibraryInit();
  ~LibraryInit();
  LibraryInit(const LibraryInit&) = delete;
  LibraryInit& operator=(const LibraryInit&) = delete;
};

/// "hfget/0.1.0 (libcurl/7.88.1 OpenSSL/3.0.x)", for --version and the User-Agent.
const char* version_string();

}  // namespace hfget
