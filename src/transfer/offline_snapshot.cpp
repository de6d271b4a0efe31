// SPDX-License-Identifier: MIT
#include "transfer/offline_snapshot.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "hfget/error.hpp"
#include "hub/hub_client.hpp"
#include "store/layout.hpp"
#include "transfer/download_steps.hpp"
#include "transfer/selection.hpp"

namespace hfget::transfer {

DownloadReport offline_snapshot(const DownloadOptions& options) {
  const Target target = options.target();
  const std::optional<std::string> commit = target.recorded_commit(options.revision);
  if (!commit || !is_commit_id(*commit)) {
    throw Error(ErrorCode::kNetwork, fmt::format("offline mode (HF_HUB_OFFLINE): revision '{}' of '{}' was never "
                                                 "downloaded here",
                                                 options.revision, options.repo.name));
  }
  const std::optional<std::vector<RemoteFile>> listing = target.recorded_listing(*commit);
  if (!listing) {
    throw Error(ErrorCode::kNetwork,
                "offline mode (HF_HUB_OFFLINE): no file listing was recorded for commit " + *commit);
  }
  const std::unique_ptr<store::Layout> layout = target.layout(*commit);
  DownloadReport report;
  report.commit = *commit;
  report.snapshot_path = layout->snapshot_path();
  report.files = plan_against_disk(transfer::select_files(*listing, options.selection), *layout);
  const auto missing =
      std::count_if(report.files.begin(), report.files.end(), [](const PlannedFile& f) { return !f.complete; });
  if (missing > 0) {
    throw Error(ErrorCode::kNetwork, fmt::format("offline mode (HF_HUB_OFFLINE): {} file(s) of commit {} are not "
                                                 "complete on disk",
                                                 missing, *commit));
  }
  for (const PlannedFile& planned : report.files) report.bytes_selected += planned.file.size;
  report.files_already_complete = report.files.size();
  return report;
}

}  // namespace hfget::transfer
