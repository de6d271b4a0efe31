// SPDX-License-Identifier: MIT
// Repo id rules follow huggingface_hub's validate_repo_id, so that an id we accept is one the Hub accepts and
// one that maps to a single, safe cache folder name.
#include "hfget/repo.hpp"

#include <cctype>

#include "hfget/error.hpp"

namespace hfget {
namespace {

constexpr std::size_t kMaxRepoIdLength = 96;

bool is_allowed_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
}

void validate_part(std::string_view part, std::string_view whole) {
  if (part.empty()) throw Error(ErrorCode::kUsage, "invalid repo id '" + std::string(whole) + "': empty part");
  for (const char c : part) {
    if (!is_allowed_char(c)) {
      throw Error(ErrorCode::kUsage,
                  "invalid repo id '" + std::string(whole) + "': only letters, digits, '-', '_' and '.' are allowed");
    }
  }
  const char first = part.front();
  const char last = part.back();
  if (first == '-' || first == '.' || last == '-' || last == '.') {
    throw Error(ErrorCode::kUsage,
                "invalid repo id '" + std::string(whole) + "': a part cannot start or end with '-' or '.'");
  }
}

}  // namespace

std::optional<RepoType> parse_repo_type(std::string_view text) {
  if (text == "model") return RepoType::kModel;
  if (text == "dataset") return RepoType::kDataset;
  if (text == "space") return RepoType::kSpace;
  return std::nullopt;
}

std::string_view to_string(RepoType type) noexcept {
  switch (type) {
    case RepoType::kModel: return "model";
    case RepoType::kDataset: return "dataset";
    case RepoType::kSpace: return "space";
  }
  return "model";
}

RepoId RepoId::parse(std::string_view name, RepoType type) {
  if (name.empty()) throw Error(ErrorCode::kUsage, "invalid repo id: it is empty");
  if (name.size() > kMaxRepoIdLength) {
    throw Error(ErrorCode::kUsage, "invalid repo id: longer than 96 characters");
  }
  if (name.find("--") != std::string_view::npos || name.find("..") != std::string_view::npos) {
    throw Error(ErrorCode::kUsage, "invalid repo id '" + std::string(name) + "': '--' and '..' are not allowed");
  }
  const std::size_t slash = name.find('/');
  if (slash == std::string_view::npos) {
    validate_part(name, name);
  } else {
    if (name.find('/', slash + 1) != std::string_view::npos) {
      throw Error(ErrorCode::kUsage, "invalid repo id '" + std::string(name) + "': expected 'name' or 'org/name'");
    }
    validate_part(name.substr(0, slash), name);
    validate_part(name.substr(slash + 1), name);
  }
  return RepoId{type, std::string(name)};
}

std::string cache_folder_name(const RepoId& repo) {
  std::string folder = std::string(to_string(repo.type)) + "s";
  std::string_view rest = repo.name;
  while (!rest.empty()) {
    const std::size_t slash = rest.find('/');
    folder += "--";
    folder += rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
  }
  return folder;
}

bool is_commit_id(const std::string& revision) {
  if (revision.size() != 40) return false;
  for (const char c : revision) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace hfget
