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

// The text with its scheme taken off: "hf://" leaves the path, a URL leaves its path (the origin goes into
// `reference`), without query or fragment.
struct Unwrapped {
  std::string_view path;
  bool is_url = false;
};

Unwrapped without_scheme(std::string_view text, RepoReference& reference) {
  if (text.starts_with("hf://")) return {text.substr(5), false};
  if (!text.starts_with("https://") && !text.starts_with("http://")) return {text, false};
  const std::size_t host_start = text.find("://") + 3;
  const std::size_t path_start = text.find('/', host_start);
  reference.origin = std::string(text.substr(0, path_start));
  const std::string_view path = path_start == std::string_view::npos ? std::string_view{} : text.substr(path_start);
  return {path.substr(0, path.find_first_of("?#")), true};
}

// A URL's path may start and end with '/'; an id may not ("/abs", "org/"): RepoId::parse says why.
void refuse_empty_parts(std::string_view text, const Unwrapped& unwrapped) {
  const std::string_view rest = unwrapped.path;
  if (unwrapped.is_url || !(rest.starts_with('/') || rest.ends_with('/') || rest.find("//") != std::string_view::npos))
    return;
  (void)RepoId::parse(rest, RepoType::kModel);
  refuse(text, "empty part");
}

// "datasets/x" alone is the canonical dataset x; "org/name" with an org called like a type is not a thing on
// the Hub (those names are reserved).
std::optional<RepoType> take_type_prefix(std::vector<std::string_view>& parts) {
  if (parts.size() < 2) return std::nullopt;
  const std::optional<RepoType> type = type_of_prefix(parts.front());
  if (type) parts.erase(parts.begin());
  return type;
}

// The repo id's one or two parts, taken off the front of `parts`. "@rev" ends the id, in the last part of the
// id: "org/name@rev" or, canonical, "name@rev".
struct NamedRepo {
  std::string name;
  std::optional<std::string> at_revision;
};

NamedRepo take_repo_name(std::vector<std::string_view>& parts) {
  NamedRepo named;
  std::size_t id_parts = 0;
  for (std::size_t i = 0; i < parts.size() && i < 2; ++i) {
    id_parts = i + 1;
    const std::size_t at = parts[i].find('@');
    if (at != std::string_view::npos) {
      named.at_revision = std::string(parts[i].substr(at + 1));
      parts[i] = parts[i].substr(0, at);
      break;
    }
  }
  named.name = std::string(parts[0]);
  if (id_parts == 2) named.name += "/" + std::string(parts[1]);
  parts.erase(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(id_parts));
  return named;
}

// The revision "@rev" or a URL's "/tree/rev" names, taken off the front of what follows the id.
std::optional<std::string> take_revision(std::string_view text, const NamedRepo& named, bool is_url,
                                         std::vector<std::string_view>& after) {
  if (named.at_revision) {
    // refs/pr/N and refs/convert/X hold slashes of their own (HfFileSystem reads them the same way).
    std::string revision = *named.at_revision;
    if ((revision == "refs") && after.size() >= 2 && (after[0] == "pr" || after[0] == "convert")) {
      revision += "/" + std::string(after[0]) + "/" + std::string(after[1]);
      after.erase(after.begin(), after.begin() + 2);
    }
    return decoded_revision(text, revision);
  }
  if (is_url && after.size() >= 2 && after[0] == "tree") {
    std::string revision = decoded_revision(text, after[1]);
    after.erase(after.begin(), after.begin() + 2);
    return revision;
  }
  return std::nullopt;
}

}  // namespace

RepoReference parse_repo_reference(std::string_view text, std::optional<RepoType> type_flag) {
  RepoReference reference;
  const Unwrapped unwrapped = without_scheme(text, reference);
  refuse_empty_parts(text, unwrapped);
  std::vector<std::string_view> parts = split_path(unwrapped.path);
  const std::optional<RepoType> named_type = take_type_prefix(parts);
  if (parts.empty()) refuse(text, "no repo id in it");
  const NamedRepo named = take_repo_name(parts);
  reference.revision = take_revision(text, named, unwrapped.is_url, parts);
  if (!parts.empty()) {
    refuse(text, "it names a path inside the repo; give the repo id, then the files (or --include 'folder/*')");
  }
  if (named_type && type_flag && *named_type != *type_flag) {
    refuse(text, "it names a " + std::string(to_string(*named_type)) + " but --repo-type is " +
                     std::string(to_string(*type_flag)));
  }
  reference.repo = RepoId::parse(named.name, named_type.value_or(type_flag.value_or(RepoType::kModel)));
  return reference;
}

}  // namespace hfget
