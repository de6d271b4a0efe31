// SPDX-License-Identifier: MIT
// Where a URL or an hf:// path carries more than a repo (a file, a folder), it is refused, not guessed at:
// `hfget download` takes files as separate arguments, and silently fetching a whole repo for a pasted file
// URL would be a 500 GB surprise.
#include <vector>

#include "hfget/error.hpp"
#include "hfget/repo.hpp"
#include "util/percent_encode.hpp"

namespace hfget {
namespace {

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const std::size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    if (!part.empty()) parts.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts;
}

std::optional<RepoType> type_of_prefix(std::string_view part) {
  if (part == "datasets") return RepoType::kDataset;
  if (part == "spaces") return RepoType::kSpace;
  if (part == "models") return RepoType::kModel;
  return std::nullopt;
}

[[noreturn]] void refuse(std::string_view text, const std::string& why) {
  throw Error(ErrorCode::kUsage, "cannot read '" + std::string(text) + "' as a repo: " + why);
}

std::string decoded_revision(std::string_view text, std::string_view encoded) {
  std::optional<std::string> revision = util::percent_decode(encoded);
  if (!revision || revision->empty()) refuse(text, "the revision is empty or badly %-encoded");
  return *revision;
}

}  // namespace

RepoReference parse_repo_reference(std::string_view text, std::optional<RepoType> type_flag) {
  RepoReference reference;
  std::string_view rest = text;
  bool is_url = false;
  if (rest.starts_with("hf://")) {
    rest.remove_prefix(5);
  } else if (rest.starts_with("https://") || rest.starts_with("http://")) {
    is_url = true;
    const std::size_t host_start = rest.find("://") + 3;
    const std::size_t path_start = rest.find('/', host_start);
    reference.origin = std::string(rest.substr(0, path_start));
    rest = path_start == std::string_view::npos ? std::string_view{} : rest.substr(path_start);
    rest = rest.substr(0, rest.find_first_of("?#"));
  }

  // A URL's path may start and end with '/'; an id may not ("/abs", "org/"): RepoId::parse says why.
  if (!is_url && (rest.starts_with('/') || rest.ends_with('/') || rest.find("//") != std::string_view::npos)) {
    (void)RepoId::parse(rest, RepoType::kModel);
    refuse(text, "empty part");
  }
  std::vector<std::string_view> parts = split_path(rest);
  std::optional<RepoType> named_type;
  // "datasets/x" alone is the canonical dataset x; "org/name" with an org called like a type is not a thing
  // on the Hub (those names are reserved).
  if (parts.size() >= 2 && type_of_prefix(parts.front())) {
    named_type = type_of_prefix(parts.front());
    parts.erase(parts.begin());
  }
  if (parts.empty()) refuse(text, "no repo id in it");

  // "@rev" ends the id, in the last part of the id: "org/name@rev" or, canonical, "name@rev".
  std::size_t id_parts = 0;
  std::optional<std::string> at_revision;
  for (std::size_t i = 0; i < parts.size() && i < 2; ++i) {
    id_parts = i + 1;
    const std::size_t at = parts[i].find('@');
    if (at != std::string_view::npos) {
      at_revision = std::string(parts[i].substr(at + 1));
      parts[i] = parts[i].substr(0, at);
      break;
    }
  }
  std::string name(parts[0]);
  if (id_parts == 2) name += "/" + std::string(parts[1]);
  std::vector<std::string_view> after(parts.begin() + static_cast<std::ptrdiff_t>(id_parts), parts.end());

  if (at_revision) {
    // refs/pr/N and refs/convert/X hold slashes of their own (HfFileSystem reads them the same way).
    std::string revision = *at_revision;
    if ((revision == "refs") && after.size() >= 2 && (after[0] == "pr" || after[0] == "convert")) {
      revision += "/" + std::string(after[0]) + "/" + std::string(after[1]);
      after.erase(after.begin(), after.begin() + 2);
    }
    reference.revision = decoded_revision(text, revision);
  } else if (is_url && after.size() >= 2 && after[0] == "tree") {
    reference.revision = decoded_revision(text, after[1]);
    after.erase(after.begin(), after.begin() + 2);
  }
  if (!after.empty()) {
    refuse(text, "it names a path inside the repo; give the repo id, then the files (or --include 'folder/*')");
  }
  if (named_type && type_flag && *named_type != *type_flag) {
    refuse(text, "it names a " + std::string(to_string(*named_type)) + " but --repo-type is " +
                     std::string(to_string(*type_flag)));
  }
  reference.repo = RepoId::parse(name, named_type.value_or(type_flag.value_or(RepoType::kModel)));
  return reference;
}

}  // namespace hfget
