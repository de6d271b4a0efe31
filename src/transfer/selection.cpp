// SPDX-License-Identifier: MIT
#include "transfer/selection.hpp"

#include <algorithm>

#include "hfget/error.hpp"
#include "util/glob_match.hpp"

namespace hfget::transfer {
namespace {

std::string normalise_pattern(std::string pattern) {
  std::replace(pattern.begin(), pattern.end(), '\\', '/');
  if (!pattern.empty() && pattern.back() == '/') pattern += '*';
  return pattern;
}

std::vector<std::string> normalise_all(const std::vector<std::string>& patterns) {
  std::vector<std::string> out;
  out.reserve(patterns.size());
  for (const std::string& pattern : patterns) out.push_back(normalise_pattern(pattern));
  return out;
}

bool matches_any(const std::vector<std::string>& patterns, const std::string& path) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& pattern) { return util::fnmatch_case(pattern, path); });
}

bool is_literal(const std::string& pattern) {
  return pattern.find_first_of("*?[") == std::string::npos;
}

std::string quoted_list(const std::vector<std::string>& patterns) {
  std::string out;
  for (const std::string& pattern : patterns) out += (out.empty() ? "'" : ", '") + pattern + "'";
  return out;
}

[[noreturn]] void throw_empty_selection(const std::vector<RemoteFile>& listing, const FileSelection& selection) {
  std::string what;
  if (!selection.files.empty()) what += "FILES " + quoted_list(selection.files);
  if (!selection.include.empty()) what += (what.empty() ? "" : ", ") + ("--include " + quoted_list(selection.include));
  if (!selection.exclude.empty()) what += (what.empty() ? "" : ", ") + ("--exclude " + quoted_list(selection.exclude));
  const std::string cause = listing.empty() ? "the repo has no files at this revision"
                                            : "no file of the " + std::to_string(listing.size()) +
                                                  " in the repo matches " + (what.empty() ? "the selection" : what);
  throw Error(ErrorCode::kFileNotFound,
              "nothing to download: " + cause + " (`hfget ls` lists them; --allow-empty accepts an empty selection)");
}

}  // namespace

std::vector<RemoteFile> select_files(const std::vector<RemoteFile>& listing, const FileSelection& selection) {
  std::vector<std::string> allow = normalise_all(selection.files);
  const std::vector<std::string> include = normalise_all(selection.include);
  allow.insert(allow.end(), include.begin(), include.end());
  const std::vector<std::string> ignore = normalise_all(selection.exclude);

  for (const std::string& wanted : selection.files) {
    const std::string pattern = normalise_pattern(wanted);
    if (!is_literal(pattern)) continue;
    const bool present =
        std::any_of(listing.begin(), listing.end(), [&](const RemoteFile& file) { return file.path == pattern; });
    if (!present) throw Error(ErrorCode::kFileNotFound, "file '" + wanted + "' is not in the repo", wanted);
  }

  std::vector<RemoteFile> selected;
  for (const RemoteFile& file : listing) {
    if (!allow.empty() && !matches_any(allow, file.path)) continue;
    if (matches_any(ignore, file.path)) continue;
    selected.push_back(file);
  }
  if (selected.empty() && !selection.allow_empty) throw_empty_selection(listing, selection);
  return selected;
}

}  // namespace hfget::transfer
