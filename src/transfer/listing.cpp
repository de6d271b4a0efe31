// SPDX-License-Identifier: MIT
// The listing step that `download` and `hfget ls` share: what ls shows must be exactly what a download with
// the same flags would fetch, so both go through the same resolve → list → validate → select functions, and
// ls adds nothing but the shard sets. Offline, ls reads what a download recorded in the cache instead.
#include "transfer/listing.hpp"

#include <fmt/format.h>

#include "hfget/error.hpp"
#include "hfget/listing.hpp"
#include "hfget/target.hpp"
#include "store/repo_path.hpp"
#include "transfer/selection.hpp"

namespace hfget {

namespace transfer {

hub::RevisionInfo pin_revision(hub::HubClient& hub, const RepoId& repo, const std::string& revision) {
  return hub.revision_info(repo, revision);
}

SelectedListing list_and_select(hub::HubClient& hub, const RepoId& repo, const std::string& commit,
                                const FileSelection& selection) {
  SelectedListing listing;
  listing.files = hub.list_files(repo, commit);
  store::validate_listing(listing.files);
  listing.selected = select_files(listing.files, selection);
  return listing;
}

}  // namespace transfer

namespace {

// HF_HUB_OFFLINE: the commit refs/<revision> names and the listing trees/<commit>.json holds, as the Python
// client's offline mode reads them; what was never recorded is an error at once, as no request may be sent.
std::vector<RemoteFile> recorded_listing(const ListOptions& options, RepoListing& listing) {
  if (store::unsafe_path_reason(options.revision)) {
    throw Error(ErrorCode::kUsage, "invalid revision '" + options.revision + "'");
  }
  const Target target = Target::in_cache(options.cache_dir, options.repo);
  std::optional<std::string> commit = target.recorded_commit(options.revision);
  std::optional<std::vector<RemoteFile>> files;
  if (commit && is_commit_id(*commit)) files = target.recorded_listing(*commit);
  if (!files) {
    throw Error(
        ErrorCode::kNetwork,
        fmt::format("offline mode (HF_HUB_OFFLINE): no listing of revision '{}' of {} '{}' is recorded in the "
                    "cache {}; run it once with network access",
                    options.revision, to_string(options.repo.type), options.repo.name, options.cache_dir.string()));
  }
  listing.commit = *commit;
  listing.offline = true;
  return std::move(*files);
}

}  // namespace

RepoListing list_repo(const ListOptions& options, std::stop_token stop) {
  RepoListing listing;
  if (options.offline) {
    listing.files = recorded_listing(options, listing);
    store::validate_listing(listing.files);
    listing.selected = transfer::select_files(listing.files, options.selection);
  } else {
    check_hub_connection(options.hub);
    hub::HubClient hub(options.hub, std::move(stop));
    listing.commit = transfer::pin_revision(hub, options.repo, options.revision).commit;
    transfer::SelectedListing listed = transfer::list_and_select(hub, options.repo, listing.commit, options.selection);
    listing.files = std::move(listed.files);
    listing.selected = std::move(listed.selected);
  }
  listing.shard_sets = find_shard_sets(listing.files, listing.selected);
  return listing;
}

}  // namespace hfget
