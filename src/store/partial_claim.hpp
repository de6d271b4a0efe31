// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "store/partial_file.hpp"

namespace hfget::store {

// Each download writes its own partial file, "<stem>.<owner>.hfget-partial" beside the file's shared name
// "<stem>.hfget-partial", where <owner> is "<host>-<pid>-<random>" (util/process_owner.hpp). Two processes therefore
// never write the same inode, even where file locks silently do nothing (NFS, Lustre): what one of them publishes
// cannot be overwritten or truncated by the other. A later run resumes from a partial file whose owner is gone by
// claiming it — renaming it to its own name, which only one claimer can do.

/// A partial file left beside `shared_name`, with its journal.
struct PartialCandidate {
  std::filesystem::path partial;
  std::filesystem::path journal;
  std::uint64_t bytes = 0;  // allocated data (a file with holes counts what it holds)
  bool owner_alive = false;
};

/// A new, unique partial file name for this process beside `shared_name`.
std::filesystem::path private_partial_path(const std::filesystem::path& shared_name);
/// The range journal of a partial file.
std::filesystem::path journal_path_for(const std::filesystem::path& partial);

/// Every partial file of this file: the shared name (left by older versions) and every owner's.
std::vector<PartialCandidate> find_partials(const std::filesystem::path& shared_name);
/// Renames the fullest partial file whose owner is gone (and its journal) to `private_name`. Returns false
/// when there is none, or another process claimed each first.
bool claim_abandoned_partial(const std::filesystem::path& shared_name, const std::filesystem::path& private_name);
/// Opens this process's own partial file for the file whose shared name is `shared_name`, resuming from an
/// abandoned one when there is one (and `look_for_abandoned`).
PartialFile open_private_partial(const std::filesystem::path& shared_name, bool look_for_abandoned = true);
/// Deletes every partial file (and journal) of this file whose owner is gone: the file is complete.
void remove_abandoned_partials(const std::filesystem::path& shared_name);

/// The partial files, journals and journal temporaries a folder held when a run first looked there. Finding
/// a file's partials means listing its folder, and a dataset's cache keeps every blob in one folder: a
/// listing per file made a 100,000-file download quadratic. With the index a run lists each folder once.
/// What it leaves out is what other runs leave there later; those are resumed or removed by the next run
/// (a run's own partial files are never claimed or removed by itself anyway). Thread-safe.
class LeftoverIndex {
 public:
  /// Whether `shared_name`'s folder, when first listed, held any partial file, journal or journal temporary
  /// of `shared_name`'s file.
  bool may_have_leftovers(const std::filesystem::path& shared_name);

 private:
  std::mutex mutex_;
  std::map<std::filesystem::path, std::set<std::string>, std::less<>> names_by_folder_;
};

}  // namespace hfget::store
