// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "hfget/download.hpp"
#include "hfget/error.hpp"
#include "store/layout.hpp"

namespace hfget::transfer {

struct FetchResults {
  std::vector<std::optional<Error>> errors;  // per planned file
  std::optional<Error> stop_cause;           // the failure that stopped every connection (a full disk)
  std::uint64_t bytes_received = 0;
  std::size_t files_fetched = 0;
};

/// Fetches every incomplete file of the plan over options.connections threads, each owning one HTTP
/// connection; the only shared state is the chunk scheduler and the stop source.
FetchResults fetch_all(const std::vector<PlannedFile>& plan, const DownloadOptions& options, const std::string& commit,
                       std::uint64_t bytes_to_fetch, store::Layout& layout, ProgressSink& progress,
                       std::stop_token outer_stop);

}  // namespace hfget::transfer
