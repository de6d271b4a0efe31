// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "cli/progress_views.hpp"
#include "hfget/run_record.hpp"

namespace hfget::cli {

/// <state dir>/state.json, the run record (hfget/run_record.hpp) that `hfget status` and `hfget wait` read.
inline std::filesystem::path state_file_path(const std::filesystem::path& state_dir) {
  return run_record_path(state_dir);
}

/// The view that keeps the run record at `path` up to date: every 2 s and once at the end, from the moment
/// this download holds the target lock (it has planned), so that a run queued behind another does not
/// overwrite that one's record.
/// `log_file`: where this run's log lines go (--log-file), recorded for `status`; empty for none.
/// `detached`: a --detach daemon also records a failure that came before it held the target lock.
std::unique_ptr<ProgressView> make_state_file_view(std::filesystem::path path, std::string repo, std::string revision,
                                                   std::string target, std::string log_file, bool detached);

}  // namespace hfget::cli
