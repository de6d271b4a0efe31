// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "crypto/content_hasher.hpp"
#include "hfget/error.hpp"
#include "hfget/progress.hpp"
#include "store/layout.hpp"
#include "store/range_journal.hpp"

namespace hfget::transfer {

/// How a FileJob treats what is on disk and a hash that does not match.
struct FileJobSettings {
  /// Fetch the file even when a complete copy is on disk (--force-download, or a copy whose hash failed
  /// `download --verify`): the new bytes replace it by the usual atomic rename.
  bool replace_existing = false;
  /// Downloads of the file in all while each one's wrong hash differs from the one before (--retries + 1).
  int max_passes = 3;
  /// The backoff before a download that follows a corrupt one doubles from this (with jitter, capped).
  std::chrono::milliseconds retry_base_delay{0};
};

/// One file being downloaded, possibly over several connections at once. It owns the file's lock, partial
/// file, range journal and hash. Ranges arrive in any order; the hash follows the contiguous written prefix
/// (reading each newly contiguous range back from the page cache it was just written to), so it is ready
/// moments after the last byte, without a second pass over the disk. Thread-safe.
class FileJob {
 public:
  FileJob(RemoteFile file, store::Layout& layout, ProgressSink& progress, FileJobSettings settings = {});
  /// A job opened but never fetched (a signal arrived first) leaves no empty journal behind.
  ~FileJob();
  FileJob(const FileJob&) = delete;
  FileJob& operator=(const FileJob&) = delete;

  const RemoteFile& file() const noexcept { return file_; }

  /// Takes the file's lock and opens what an earlier run left. Returns false when there is nothing to fetch
  /// (complete already, or an intact copy was adopted). Otherwise the missing ranges are ready.
  bool activate(const std::stop_token& stop);
  std::vector<store::ByteRange> missing_ranges() const;

  /// Writes received bytes (from any connection) at their offset, then records them at once: journal,
  /// then the hash, from these very bytes where they continue the hashed prefix (else read back once the
  /// prefix reaches them), then progress. A kill -9 between the write and its journal line — the only
  /// bytes it can cost — is a window of one lock acquisition.
  void store(std::uint64_t offset, std::span<const std::byte> bytes);
  /// Records [begin, end) as written: journal, then the hash catches up with the contiguous prefix.
  void complete_range(store::ByteRange range);

  /// Checks a response's ETag (`etag`: the header, nullptr when absent) against the one the file's bytes
  /// were recorded with. The first strong ETag of an origin is recorded (in the journal, for a resume). A
  /// different one from the same origin means the file changed under its URL: returns false, and the job
  /// asks to start over (restart_requested) rather than splice two versions. Weak ETags say nothing.
  bool accept_validator(const std::string& origin, const std::string* etag);
  /// The value for "If-Range" on a ranged request to `origin`: its recorded strong ETag, if any.
  std::optional<std::string> if_range_for(const std::string& origin) const;
  /// True once the file changed on the server; the scheduler then stops its ranges and calls start_over().
  bool restart_requested() const;
  /// With no range of the file in flight: discards every byte so the file is fetched again, expecting the
  /// new ETag. Throws Error{kVerificationFailed} when the file had changed once already: a server that
  /// keeps changing its bytes is not trusted.
  void start_over_after_change();

  enum class Outcome { kPublished, kStartOver };
  /// Every byte is in: compares the hash. A match publishes the file (kPublished). A mismatch is transport
  /// corruption while each wrong hash differs from the one before: the bytes are discarded and, after a
  /// backoff (ended early by `stop`), the file is downloaded again (kStartOver), up to max_passes downloads.
  /// The same wrong hash twice means the server's bytes are not the listed ones: Error{kVerificationFailed}
  /// at once, naming both hashes; so does a wrong hash on the last pass. Stopped during the backoff:
  /// Error{kInterrupted}.
  Outcome finish(const std::stop_token& stop = {});
  /// Gives up on the file: keeps the partial file and journal for the next run, releases the lock.
  void abandon();

  // The signed CDN URL the Hub redirected to, shared by the file's connections until the CDN refuses it.
  void set_cdn_url(const std::string& url);
  void forget_cdn_url(const std::string& url);

  /// What a connection about to fetch a range of an LFS file should do about the CDN URL.
  struct UrlLease {
    std::string cdn_url;     // use it; empty: ask the Hub
    bool resolving = false;  // this connection asks the Hub for the file; call resolve_finished() after
  };
  /// The shared CDN URL; or, when there is none, the task of resolving it — unless another connection is
  /// asking the Hub right now: then waits (at most a few seconds, or until `stop`) for its answer. One
  /// /resolve/ request per file rather than one per connection saves the Hub's rate-limit quota.
  UrlLease lease_cdn_url(const std::stop_token& stop);
  /// Ends this connection's resolve (the redirect came, or the attempt failed): others stop waiting.
  void resolve_finished();

  std::uint64_t bytes_received() const noexcept { return bytes_received_; }

  /// How many connections may work on this file at once; a CDN refusal (429, 403 on a parallel range)
  /// lowers it, down to 1, instead of failing the file.
  int connection_limit() const noexcept { return connection_limit_; }
  void set_connection_limit(int limit) noexcept { connection_limit_ = limit; }
  void note_refusal() noexcept { refusals_ += 1; }
  int take_refusals() noexcept { return refusals_.exchange(0); }

 private:
  void record(store::ByteRange range, std::span<const std::byte> written);  // requires mutex_
  // requires mutex_; `stop` (while a resumed file's kept bytes are read back) makes it throw kInterrupted
  void advance_hash(const std::stop_token* stop = nullptr);
  void start_writeback();        // requires mutex_
  void discard_bytes_written();  // requires mutex_

  RemoteFile file_;
  store::Layout& layout_;
  ProgressSink& progress_;
  mutable std::mutex mutex_;
  std::optional<store::FileLock> lock_;
  std::optional<store::PartialFile> partial_;
  std::optional<store::RangeJournal> journal_;
  std::optional<crypto::ContentHasher> hasher_;
  std::uint64_t hashed_up_to_ = 0;
  std::uint64_t written_back_up_to_ = 0;  // the hashed prefix up to here was handed to the disk
  FileJobSettings settings_;
  int pass_ = 1;  // downloads of the file so far, this one included (restarts after a change count too)
  int corrupt_passes_ = 0;
  int changes_ = 0;              // times the file changed on the server (another ETag) during this run
  std::string last_wrong_hash_;  // what the previous corrupt download hashed to
  std::string cdn_url_;
  bool resolving_ = false;  // a connection is asking the Hub for cdn_url_
  std::condition_variable_any url_changed_;
  std::optional<store::BodyValidator> changed_to_;  // the new ETag, once the file changed on the server
  std::atomic<std::uint64_t> bytes_received_{0};
  std::atomic<int> connection_limit_{1 << 20};
  std::atomic<int> refusals_{0};
};

}  // namespace hfget::transfer
