// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
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

/// The step that makes a verified file visible under its final name (the layout's rename, links and
/// metadata). fetch_all is given it by download(), which builds it from the layout (transfer/publish.hpp):
/// the engine calls it for each file as soon as that file is verified, so a crash loses no finished file.
using PublishStep = std::function<void(const RemoteFile& file, store::PartialFile&& bytes)>;

/// How an IncomingFile treats what is on disk and a hash that does not match.
struct StageClock;

struct IncomingFileSettings {
  /// Fetch the file even when a complete copy is on disk (--force-download, or a copy whose hash failed
  /// `download --verify`): the new bytes replace it by the usual atomic rename.
  bool replace_existing = false;
  /// Downloads of the file in all while each one's wrong hash differs from the one before (--retries + 1).
  int max_passes = 3;
  /// The backoff before a download that follows a corrupt one doubles from this (with jitter, capped).
  std::chrono::milliseconds retry_base_delay{0};
  /// Where the time writing, hashing and waiting for the file's lock goes (none: not counted).
  StageClock* clock = nullptr;
};

/// One file on its way to the disk, its bytes arriving over any number of connections from any source. It
/// owns the file's lock, partial file, range journal, hash and the validator (ETag) its bytes were written
/// with, and gives the verdict once every byte is in. It knows nothing of HTTP: where the bytes come from
/// (URLs, CDN leases, refusals) is the byte source's business (transfer/byte_source.hpp). Ranges arrive in
/// any order; the hash follows the contiguous written prefix (reading each newly contiguous range back from
/// the page cache it was just written to), so it is ready moments after the last byte, without a second
/// pass over the disk. Thread-safe.
class IncomingFile {
 public:
  IncomingFile(RemoteFile file, store::Layout& layout, ProgressSink& progress, IncomingFileSettings settings = {});
  /// A file opened but never fetched (a signal arrived first) leaves no empty journal behind.
  ~IncomingFile();
  IncomingFile(const IncomingFile&) = delete;
  IncomingFile& operator=(const IncomingFile&) = delete;

  const RemoteFile& remote() const noexcept { return file_; }

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

  /// Checks a validator (an ETag; nullptr when absent) that `origin` (an opaque name of the server, as the
  /// source calls it) sent with bytes, against the one the file's bytes were recorded with. The first strong
  /// one of an origin is recorded (in the journal, for a resume). A different one from the same origin means
  /// the file changed under its name: returns false, and the file asks to start over (restart_requested)
  /// rather than splice two versions. Weak ETags ("W/…") say nothing.
  bool accept_validator(const std::string& origin, const std::string* etag);
  /// The validator recorded for `origin`, if any: what a source sends for the server to check (If-Range).
  std::optional<std::string> validator_for(const std::string& origin) const;
  /// True once the file changed on the server; the scheduler then stops its ranges and calls start_over().
  bool restart_requested() const;
  /// With no range of the file in flight: discards every byte so the file is fetched again, expecting the
  /// new ETag. Throws Error{kVerificationFailed} when the file had changed once already: a server that
  /// keeps changing its bytes is not trusted.
  void start_over_after_change();

  enum class Verdict { kVerified, kStartOver };
  /// Every byte is in: compares the hash. A match is kVerified: the file is ready for publish(). A mismatch is
  /// transport corruption while each wrong hash differs from the one before: the bytes are discarded and, after a
  /// backoff (ended early by `stop`), the file is downloaded again (kStartOver), up to max_passes downloads.
  /// The same wrong hash twice in a row (three times for a file under 1 MiB, where a flip has few places to
  /// land) means the server's bytes are not the listed ones: Error{kVerificationFailed} at once, naming both
  /// hashes; so does a wrong hash on the last pass. Stopped during the backoff:
  /// Error{kInterrupted}.
  Verdict verify(const std::stop_token& stop = {});
  /// After kVerified: hands the partial file to `publish` (journal removed first: killed in between, the
  /// whole partial file without a journal reads as the complete prefix it is), then releases the lock.
  void publish(const PublishStep& publish);
  /// Gives up on the file: keeps the partial file and journal for the next run, releases the lock.
  void abandon();

  std::uint64_t bytes_received() const noexcept { return bytes_received_; }
  /// Tells progress that `bytes` of what store() is given were copied from a local file, not received.
  void note_copied(std::uint64_t bytes) { progress_.on_bytes_copied(file_, bytes); }

 private:
  // `guard` holds mutex_; it is let go while this connection hashes (and held again when record returns).
  void record(std::unique_lock<std::mutex>& guard, store::ByteRange range, std::span<const std::byte> written);
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
  bool hashing_ = false;                  // a connection is hashing past hashed_up_to_, outside the lock
  std::uint64_t written_back_up_to_ = 0;  // the hashed prefix up to here was handed to the disk
  IncomingFileSettings settings_;
  int pass_ = 1;  // downloads of the file so far, this one included (restarts after a change count too)
  int corrupt_passes_ = 0;
  int changes_ = 0;                 // times the file changed on the server (another ETag) during this run
  std::string last_wrong_hash_;     // what the previous corrupt download hashed to
  int identical_wrong_hashes_ = 0;  // corrupt downloads in a row, up to this one, that hashed to last_wrong_hash_
  std::optional<store::BodyValidator> changed_to_;  // the new ETag, once the file changed on the server
  std::atomic<std::uint64_t> bytes_received_{0};
};

}  // namespace hfget::transfer
