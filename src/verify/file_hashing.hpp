// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <stop_token>
#include <string>
#include <vector>

#include "hfget/repo.hpp"
#include "hfget/verify.hpp"

namespace hfget::verify {

struct HashJob {
  std::filesystem::path path;  // on disk
  RemoteFile expected;         // the hash the listing promises
};

struct HashOutcome {
  bool matches = false;
  std::string algorithm;  // "sha256" or "git-sha1"
  std::string actual;     // empty when the file could not be read
  std::string error;      // why it could not be read
};

/// Hashes every job's file with `jobs` threads (largest files first, so the last thread does not start a
/// huge file alone at the end), reading each file in 16 MiB windows with read-ahead hints, mapped or copied,
/// whichever costs this machine less CPU (io/file_reads). Memory: at most one mapped window (page cache
/// pages that count in RSS) and one 256 KiB buffer per thread. Returns outcomes in the jobs' order;
/// `bytes_hashed` adds up what was read; `progress`, when given, follows it while the threads read.
std::vector<HashOutcome> hash_files(const std::vector<HashJob>& jobs, unsigned threads, std::uint64_t& bytes_hashed,
                                    std::stop_token stop, VerifyProgress* progress = nullptr);

}  // namespace hfget::verify
