// SPDX-License-Identifier: MIT
#include "store/partial_claim.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <optional>

#include "util/process_owner.hpp"

namespace hfget::store {
namespace {

constexpr std::string_view kPartialSuffix = ".hfget-partial";

std::string stem_of(const std::filesystem::path& shared_name) {
  const std::string name = shared_name.filename().string();
  return name.ends_with(kPartialSuffix) ? name.substr(0, name.size() - kPartialSuffix.size()) : name;
}

bool owner_alive(const std::optional<util::ProcessOwner>& owner, const std::filesystem::path& partial) {
  if (!owner) return false;  // the shared name: nobody writes it
  return util::owner_may_be_alive(*owner, {partial, journal_path_for(partial)});
}

std::uint64_t data_bytes(const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return 0;
  return std::min(static_cast<std::uint64_t>(info.st_size), static_cast<std::uint64_t>(info.st_blocks) * 512);
}

// The owner named by "<stem>.<owner>.hfget-journal" or by a temporary of its rewrite,
// ".<stem>.<owner>.hfget-journal.<writer>.hfget-tmp"; nullopt for any other name.
std::optional<std::string> leftover_owner(std::string name, const std::string& stem) {
  constexpr std::string_view kJournal = ".hfget-journal";
  if (name.starts_with(".") && name.ends_with(".hfget-tmp")) {
    const std::size_t journal = name.find(kJournal);
    if (journal == std::string::npos) return std::nullopt;
    name = name.substr(1, journal - 1 + kJournal.size());
  }
  if (!name.starts_with(stem + ".") || !name.ends_with(kJournal)) return std::nullopt;
  std::string owner = name.substr(stem.size() + 1, name.size() - stem.size() - 1 - kJournal.size());
  if (!util::parse_owner_token(owner)) return std::nullopt;
  return owner;
}

}  // namespace

std::filesystem::path private_partial_path(const std::filesystem::path& shared_name) {
  const std::string owner = util::new_owner_token();
  return shared_name.parent_path() / fmt::format("{}.{}{}", stem_of(shared_name), owner, kPartialSuffix);
}

std::filesystem::path journal_path_for(const std::filesystem::path& partial) {
  return std::filesystem::path(partial).replace_extension(".hfget-journal");
}

std::vector<PartialCandidate> find_partials(const std::filesystem::path& shared_name) {
  std::vector<PartialCandidate> found;
  const std::string prefix = stem_of(shared_name) + ".";
  std::error_code error;
  for (std::filesystem::directory_iterator it(shared_name.parent_path(), error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::optional<util::ProcessOwner> owner;
    if (name != shared_name.filename().string()) {
      if (!name.starts_with(prefix) || !name.ends_with(kPartialSuffix)) continue;
      owner = util::parse_owner_token(name.substr(prefix.size(), name.size() - prefix.size() - kPartialSuffix.size()));
      if (!owner) continue;
    }
    if (!it->is_regular_file(error)) continue;
    found.push_back({it->path(), journal_path_for(it->path()), data_bytes(it->path()), owner_alive(owner, it->path())});
  }
  return found;
}

bool claim_abandoned_partial(const std::filesystem::path& shared_name, const std::filesystem::path& private_name) {
  std::vector<PartialCandidate> candidates = find_partials(shared_name);
  std::erase_if(candidates, [](const PartialCandidate& candidate) { return candidate.owner_alive; });
  std::sort(candidates.begin(), candidates.end(),
            [](const PartialCandidate& a, const PartialCandidate& b) { return a.bytes > b.bytes; });
  const std::filesystem::path private_journal = journal_path_for(private_name);
  // A rename keeps the file's times. Under our name, files last written before this process started would
  // tell others that our PID is a newer process than their owner (util::owner_may_be_alive), so they are
  // touched before they are taken.
  const auto touch = [](const std::filesystem::path& path) { ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); };
  for (const PartialCandidate& candidate : candidates) {
    // The journal first: a claimer that lost the race for it never takes the partial file, and would
    // otherwise read a file with holes as a contiguous prefix.
    const bool had_journal = std::filesystem::exists(candidate.journal);
    if (had_journal) touch(candidate.journal);
    if (had_journal && ::rename(candidate.journal.c_str(), private_journal.c_str()) != 0) continue;
    touch(candidate.partial);
    if (::rename(candidate.partial.c_str(), private_name.c_str()) == 0) return true;
    if (had_journal) ::unlink(private_journal.c_str());
  }
  return false;
}

PartialFile open_private_partial(const std::filesystem::path& shared_name, bool look_for_abandoned) {
  const std::filesystem::path private_name = private_partial_path(shared_name);
  if (look_for_abandoned) claim_abandoned_partial(shared_name, private_name);
  return PartialFile::open(private_name);
}

void remove_abandoned_partials(const std::filesystem::path& shared_name) {
  std::error_code ignored;
  for (const PartialCandidate& candidate : find_partials(shared_name)) {
    if (candidate.owner_alive) continue;
    std::filesystem::remove(candidate.journal, ignored);
    std::filesystem::remove(candidate.partial, ignored);
  }
  std::filesystem::remove(journal_path_for(shared_name), ignored);
  // What a gone owner left beside them: a journal whose partial file was empty and removed, a journal
  // rewrite cut short by a kill.
  std::vector<std::filesystem::path> leftovers;
  std::error_code error;
  for (std::filesystem::directory_iterator it(shared_name.parent_path(), error), end; !error && it != end;
       it.increment(error)) {
    const std::optional<std::string> owner_text = leftover_owner(it->path().filename().string(), stem_of(shared_name));
    if (!owner_text) continue;
    const std::filesystem::path partial =
        shared_name.parent_path() / fmt::format("{}.{}{}", stem_of(shared_name), *owner_text, kPartialSuffix);
    if (!std::filesystem::exists(partial) && !owner_alive(util::parse_owner_token(*owner_text), partial)) {
      leftovers.push_back(it->path());
    }
  }
  for (const std::filesystem::path& leftover : leftovers) std::filesystem::remove(leftover, ignored);
}

bool LeftoverIndex::may_have_leftovers(const std::filesystem::path& shared_name) {
  const std::string stem = stem_of(shared_name);
  const std::lock_guard lock(mutex_);
  auto folder = names_by_folder_.find(shared_name.parent_path());
  if (folder == names_by_folder_.end()) {
    std::set<std::string> names;
    std::error_code error;  // no folder yet: nothing left there
    for (std::filesystem::directory_iterator it(shared_name.parent_path(), error), end; !error && it != end;
         it.increment(error)) {
      std::string name = it->path().filename().string();
      if (name.find(".hfget-") != std::string::npos) names.insert(std::move(name));
    }
    folder = names_by_folder_.emplace(shared_name.parent_path(), std::move(names)).first;
  }
  const auto any_starts_with = [&names = folder->second](const std::string& prefix) {
    const auto it = names.lower_bound(prefix);
    return it != names.end() && it->starts_with(prefix);
  };
  // "<stem>.hfget-partial", "<stem>.<owner>.hfget-partial" and "-journal"; ".<stem>.<owner>...hfget-tmp".
  return any_starts_with(stem + ".") || any_starts_with("." + stem + ".");
}

}  // namespace hfget::store
