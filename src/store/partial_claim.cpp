// SPDX-License-Identifier: MIT
#include "store/partial_claim.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <optional>
#include <random>
#include <regex>

namespace hfget::store {
namespace {

constexpr std::string_view kPartialSuffix = ".hfget-partial";

// Letters, digits and '_' only: owner names contain no '.', so no other file's partial can pass for one.
const std::string& host_name() {
  static const std::string name = [] {
    std::array<char, 256> buffer{};
    std::string host = ::gethostname(buffer.data(), buffer.size() - 1) == 0 ? buffer.data() : "host";
    host = host.substr(0, 32);
    for (char& c : host) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    return host.empty() ? std::string("host") : host;
  }();
  return name;
}

struct Owner {
  std::string host;
  long pid = 0;
};

std::optional<Owner> parse_owner(const std::string& text) {
  static const std::regex pattern("([A-Za-z0-9_]{1,32})-([0-9]{1,10})-[0-9a-f]{8}");
  std::smatch match;
  if (!std::regex_match(text, match, pattern)) return std::nullopt;
  return Owner{match[1].str(), std::stol(match[2].str())};
}

std::string stem_of(const std::filesystem::path& shared_name) {
  const std::string name = shared_name.filename().string();
  return name.ends_with(kPartialSuffix) ? name.substr(0, name.size() - kPartialSuffix.size()) : name;
}

bool recently_modified(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return false;
  const auto modified = std::chrono::system_clock::from_time_t(info.st_mtim.tv_sec);
  return std::chrono::system_clock::now() - modified < kForeignPartialStaleAfter;
}

bool owner_alive(const std::optional<Owner>& owner, const std::filesystem::path& partial) {
  if (!owner) return false;  // the shared name: nobody writes it
  if (owner->host == host_name()) return ::kill(static_cast<pid_t>(owner->pid), 0) == 0 || errno == EPERM;
  return recently_modified(partial) || recently_modified(journal_path_for(partial));
}

std::uint64_t data_bytes(const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return 0;
  return std::min(static_cast<std::uint64_t>(info.st_size), static_cast<std::uint64_t>(info.st_blocks) * 512);
}

}  // namespace

std::filesystem::path private_partial_path(const std::filesystem::path& shared_name) {
  static thread_local std::mt19937 random{std::random_device{}()};
  const std::string owner = fmt::format("{}-{}-{:08x}", host_name(), ::getpid(), random());
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
    std::optional<Owner> owner;
    if (name != shared_name.filename().string()) {
      if (!name.starts_with(prefix) || !name.ends_with(kPartialSuffix)) continue;
      owner = parse_owner(name.substr(prefix.size(), name.size() - prefix.size() - kPartialSuffix.size()));
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
  for (const PartialCandidate& candidate : candidates) {
    // The journal first: a claimer that lost the race for it never takes the partial file, and would
    // otherwise read a file with holes as a contiguous prefix.
    const bool had_journal = std::filesystem::exists(candidate.journal);
    if (had_journal && ::rename(candidate.journal.c_str(), private_journal.c_str()) != 0) continue;
    if (::rename(candidate.partial.c_str(), private_name.c_str()) == 0) return true;
    if (had_journal) ::unlink(private_journal.c_str());
  }
  return false;
}

PartialFile open_private_partial(const std::filesystem::path& shared_name) {
  const std::filesystem::path private_name = private_partial_path(shared_name);
  claim_abandoned_partial(shared_name, private_name);
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
}

}  // namespace hfget::store
