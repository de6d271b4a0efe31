// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hfget {

enum class RepoType { kModel, kDataset, kSpace };

/// "model", "dataset", "space" → RepoType; nullopt otherwise.
std::optional<RepoType> parse_repo_type(std::string_view text);
std::string_view to_string(RepoType type) noexcept;

/// A repository on the Hub, e.g. {kModel, "moonshotai/Kimi-K2.5"}.
struct RepoId {
  RepoType type = RepoType::kModel;
  std::string name;  // "org/name" or "name"

  /// Validates `name` with the Hub client's rules (one optional "org/", [A-Za-z0-9_.-], no "--" or "..",
  /// at most 96 characters); throws Error{kUsage} naming the problem.
  static RepoId parse(std::string_view name, RepoType type);
};

/// A repo as a user may name it where a repo id is expected: the id itself, or the spellings `hf`, the
/// Hub's pages and HfFileSystem use, so that a deploy script written for `hf download` (or a URL pasted from
/// a browser) works unchanged.
struct RepoReference {
  RepoId repo;
  std::optional<std::string> revision;  // from "@rev" or ".../tree/rev"
  std::optional<std::string> origin;    // "https://huggingface.co" when the text was a URL
};

/// Parses "org/name", "name", "org/name@rev", "datasets/org/name" (also "spaces/", "models/"; "datasets/squad"
/// is the canonical dataset "squad", as huggingface_hub reads it), "hf://[datasets/]org/name[@rev]" and
/// "https://host/[datasets/]org/name[/tree/rev]". `type_flag` is --repo-type when it was given: a type the
/// text names must agree with it. Throws Error{kUsage} naming the problem, e.g. a path inside the repo.
RepoReference parse_repo_reference(std::string_view text, std::optional<RepoType> type_flag);

/// "models--org--name": the repo's folder in the HF cache.
std::string cache_folder_name(const RepoId& repo);

/// True for a full commit id (40 lowercase hex): such a revision names one commit and needs no lookup.
bool is_commit_id(const std::string& revision);

/// One file of a repo at a commit, as the tree listing describes it.
struct RemoteFile {
  std::string path;                       // repo-relative, '/'-separated, validated before touching disk
  std::uint64_t size = 0;                 // real content size
  std::string blob_id;                    // git blob sha1 (of the LFS pointer, for LFS files)
  std::optional<std::string> lfs_sha256;  // content sha256, for LFS files
  std::optional<std::uint64_t> lfs_size;
  std::optional<std::string> xet_hash;

  bool is_lfs() const noexcept { return lfs_sha256.has_value(); }
  /// The normalised ETag the Hub reports and the cache names the blob after.
  const std::string& etag() const noexcept { return lfs_sha256 ? *lfs_sha256 : blob_id; }
};

/// A repo pinned to one commit, with its complete (unfiltered) file listing.
struct Snapshot {
  std::string commit;  // 40 lowercase hex
  std::vector<RemoteFile> files;
};

}  // namespace hfget
