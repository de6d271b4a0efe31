// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "hfget/hub_connection.hpp"
#include "hfget/progress.hpp"
#include "hfget/repo.hpp"
#include "hfget/target.hpp"
#include "hfget/verify.hpp"

namespace hfget {

/// Which files of the listing to fetch, with huggingface_hub's fnmatch rules.
struct FileSelection {
  std::vector<std::string> files;    // positional FILES: patterns; a literal one must exist
  std::vector<std::string> include;  // --include (any match keeps a file)
  std::vector<std::string> exclude;  // --exclude (any match drops it)
  bool allow_empty = false;          // else a selection that keeps no file is Error{kFileNotFound}
};

struct DownloadOptions {
  RepoId repo;
  std::string revision = "main";
  FileSelection selection;
  std::optional<std::filesystem::path> local_dir;  // else the HF cache
  std::filesystem::path cache_dir;
  HubConnection hub;     // endpoint, token, transfer limits, retry policy
  int max_workers = 12;  // files open at once
  /// HTTP connections in all, shared by the open files, fixed for the whole download. Unset: adaptive, the
  /// connection controller picks the count for the link, up to max_connections.
  std::optional<int> connections;
  int max_connections = 64;       // the adaptive count's ceiling (not applied to a fixed count)
  std::uint64_t chunk_bytes = 0;  // 0: adaptive (4–64 MiB); larger missing ranges are cut into chunks
  /// --max-speed: bytes per second across all connections; 0: no limit.
  std::uint64_t max_bytes_per_second = 0;
  bool dry_run = false;
  bool offline = false;
  bool symlinks_disabled = false;  // the cache's snapshot files are real files (HF_HUB_DISABLE_SYMLINKS)
  /// Fetch the files the listing gives a xet hash with the Xet protocol (the Hub's own clients' way); false
  /// (--no-xet, HF_HUB_DISABLE_XET): every file over the LFS bridge. Without a read token, or where the CAS
  /// cannot serve a file, that file goes over the bridge anyway.
  bool xet = true;
  /// Over Xet, copy the chunks that files already in the target hold (an earlier revision hfget fetched)
  /// instead of fetching them; false (--no-chunk-reuse): fetch every chunk.
  bool reuse_chunks = true;
  /// Fetch every selected file again, even those complete on disk (`hf download --force-download`).
  bool force_download = false;
  /// Hash every selected file found complete on disk first, and fetch again exactly those that fail
  /// (`download --verify`: the repair of a file that rotted or was edited after it was published).
  bool verify_present = false;
  bool check_space = true;    // refuse to start when the bytes still needed exceed the free space
  bool wait_for_lock = true;  // queue behind another hfget on the same target, else fail with kBusy

  /// Where the files land: `local_dir` when set, else `repo` in `cache_dir`.
  Target target() const;
};

/// The smallest --chunk-size: a smaller range costs a request per 64 KiB.
inline constexpr std::uint64_t kMinChunkBytes = 64 * 1024;
/// Error{kUsage} for a chunk size under kMinChunkBytes (0, adaptive, is fine). Part of check_download_options;
/// the CLI calls it as it parses --chunk-size, so that the flag fails before a run starts.
void check_chunk_bytes(std::uint64_t chunk_bytes);

/// Error{kUsage}, naming the flag, for options no download could run with: the Hub connection's limits
/// (check_hub_connection), --chunk-size under kMinChunkBytes, --max-workers, --connections or
/// --max-connections outside 1..256, a --max-speed that leaves each connection less than twice the
/// --speed-limit it is dropped under,
/// an empty or unsafe revision, an endpoint that is not http(s) (unless offline). `download` and
/// `check_download_source` call it first.
void check_download_options(const DownloadOptions& options);

/// The PID of the hfget download holding the lock of the target of `options`, if one does.
std::optional<long> target_holder(const DownloadOptions& options);

struct PlannedFile {
  RemoteFile file;
  bool complete = false;  // already on disk and intact: no request
  bool replace = false;   // on disk, but fetched again and renamed over it (--force-download, or failed --verify)
  // --dry-run: of the bytes to fetch over Xet, those files already in the target hold (chunk reuse)
  std::uint64_t bytes_to_copy = 0;
};

/// Where the download connections' time went, in seconds summed over every connection (16 connections for
/// 10 s make 160 s): what tells a slow disk or hash from a slow link. `fetching` is the time on ranges; the
/// four after it are parts of it (hashing also runs in `finishing`, for a file's last bytes); the rest of
/// `fetching` is the network's: requests, and waiting for bytes to arrive.
struct ConnectionTimes {
  double fetching = 0;
  double writing = 0;           // writing arrived bytes to the partial files
  double hashing = 0;           // SHA-256 of them, as they become contiguous
  double waiting_for_file = 0;  // for another connection of the same file to finish writing or hashing
  double planning = 0;          // for Xet reconstructions (the CAS's plan of a range)
  double finishing = 0;         // recording finished ranges, verifying and publishing finished files
  double idle = 0;              // waiting for a range to fetch

  /// The part of `fetching` its other parts leave: the network, and decoding Xet chunks.
  double receiving() const {
    const double rest = fetching - writing - hashing - waiting_for_file - planning;
    return rest > 0 ? rest : 0;
  }
};

struct DownloadReport {
  std::string commit;
  std::filesystem::path snapshot_path;
  std::vector<PlannedFile> files;  // the selected files
  std::uint64_t bytes_selected = 0;
  std::uint64_t bytes_received = 0;      // over the network in this run
  std::uint64_t bytes_over_xet = 0;      // of those, file bytes decoded from Xet xorb ranges (the rest: the bridge)
  std::uint64_t xorb_bytes_fetched = 0;  // what those came as on the wire (compressed chunks)
  // File bytes copied from files already in the target instead of fetched (Xet chunks an earlier revision
  // holds); not in bytes_received.
  std::uint64_t bytes_copied_locally = 0;
  std::size_t files_fetched = 0;
  std::size_t files_already_complete = 0;
  std::size_t files_hashed_on_disk = 0;     // of those, hashed in this run (--verify); the others were trusted
  std::size_t files_repaired = 0;           // found complete but failing their hash (--verify): fetched again
  std::uint64_t bytes_to_fetch = 0;         // still needed: selected minus complete files minus partial bytes
  std::optional<std::uint64_t> free_bytes;  // on the target's filesystem, when known
  std::chrono::duration<double> elapsed{};
  ConnectionTimes connection_times;
  VerifyReport checks;  // the checks run at the end (no re-hash: fetched bytes were hashed on arrival)
};

/// What `--detach` checks before it leaves: the options, and that the repo and revision exist and the token
/// may read them (a gated repo's files too, with one request), and that the selection keeps a file, so that
/// a typo fails at once (exit 3, 4, 5, 6 or 7) instead of in the background. Writes nothing. Returns the
/// snapshot path. Runs no thread that outlives it.
std::filesystem::path check_download_source(const DownloadOptions& options, std::stop_token stop);

/// Resolves the revision to a commit once, lists the whole tree at that commit, selects files, and downloads
/// the missing ones in parallel with resumable Range requests, verifying size and hash of each before it
/// appears under its final name, then runs `hfget verify`'s checks on the snapshot (sizes, shard set,
/// safetensors headers, config, tokenizer; hashes were checked on arrival). Throws Error; when several files
/// fail, the first failure of the most severe kind is thrown after every other file had its chance; failed
/// checks throw Error{kVerificationFailed} naming the files.
DownloadReport download(const DownloadOptions& options, ProgressSink& progress, std::stop_token stop);

}  // namespace hfget
