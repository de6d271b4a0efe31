// SPDX-License-Identifier: MIT
#include "transfer/incoming_file.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <random>

#include "http/retry_policy.hpp"
#include "store/partial_claim.hpp"
#include "transfer/stage_clock.hpp"
#include "util/interruptible_sleep.hpp"
#include "util/thread_random.hpp"

namespace hfget::transfer {
IncomingFile::IncomingFile(RemoteFile file, store::Layout& layout, ProgressSink& progress,
                           IncomingFileSettings settings)
    : file_(std::move(file)), layout_(layout), progress_(progress), settings_(settings) {}

IncomingFile::~IncomingFile() {
  try {
    abandon();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw; a stray journal is harmless
  }
}

bool IncomingFile::activate(const std::stop_token& stop) {
  std::lock_guard guard(mutex_);
  lock_.emplace(layout_.lock(file_, stop));
  // Another process (or another path with the same content) may have finished it while we waited; unless
  // the copy on disk is the very one to be replaced.
  if (!settings_.replace_existing && layout_.is_complete(file_)) {
    layout_.link_existing(file_);
    lock_.reset();
    return false;
  }
  if (!settings_.replace_existing && layout_.adopt_unrecorded(file_, stop)) {
    spdlog::info("{}: already on disk with the listed hash; recorded it without downloading", file_.path);
    lock_.reset();
    return false;
  }
  partial_.emplace(layout_.open_partial(file_));
  // Without a journal, a partial file is the contiguous prefix a single-stream run left.
  journal_.emplace(store::RangeJournal::open(store::journal_path_for(partial_->path()), file_.size, file_.etag(),
                                             std::min(partial_->size(), file_.size)));
  // A journal that claims bytes the partial file does not hold (deleted or truncated by hand) is not trusted.
  const std::vector<store::ByteRange>& recorded = journal_->completed();
  if (!recorded.empty() && recorded.back().end > partial_->size()) journal_->reset();
  journal_->persist();  // before any chunk is written: a partial file with holes always has its journal
  hasher_.emplace(file_);
  hashed_up_to_ = 0;
  written_back_up_to_ = 0;
  const std::uint64_t kept = journal_->completed_bytes();
  progress_.on_file_started(file_, kept);
  // A resumed file is still hashed in full: its kept prefix is read back once (gigabytes: a signal must
  // not wait for it).
  advance_hash(&stop);
  return true;
}

std::vector<store::ByteRange> IncomingFile::missing_ranges() const {
  std::lock_guard guard(mutex_);
  return journal_->missing();
}

void IncomingFile::store(std::uint64_t offset, std::span<const std::byte> bytes) {
  StageClock* clock = settings_.clock;
  {
    const StageTimer writing(clock, &StageClock::writing_ns);
    partial_->write_at(offset, bytes);
  }
  bytes_received_ += bytes.size();
  {
    std::unique_lock guard(mutex_, std::defer_lock);
    {
      const StageTimer waiting(clock, &StageClock::waiting_for_file_ns);
      guard.lock();
    }
    record(guard, {offset, offset + bytes.size()}, bytes);
  }
  progress_.on_bytes(file_, bytes.size());
}

void IncomingFile::complete_range(store::ByteRange range) {
  std::unique_lock guard(mutex_);
  record(guard, range, {});
}

void IncomingFile::record(std::unique_lock<std::mutex>& guard, store::ByteRange range,
                          std::span<const std::byte> written) {
  journal_->add(range);
  // One connection at a time hashes the file, and not under the lock: the others only record their ranges
  // and go on receiving (hashing under the lock made every writer of the file wait for each read-back). The
  // one hashing looks at the prefix again before it lets go, so a range recorded meanwhile is not missed.
  if (hashing_) return;
  hashing_ = true;
  std::span<const std::byte> in_memory =
      range.begin == hashed_up_to_ && written.size() == range.size() ? written : std::span<const std::byte>{};
  try {
    for (std::uint64_t prefix = journal_->contiguous_prefix(); prefix > hashed_up_to_;
         prefix = journal_->contiguous_prefix()) {
      const std::uint64_t from = hashed_up_to_;
      guard.unlock();
      {
        const StageTimer hashing(settings_.clock, &StageClock::hashing_ns);
        // These very bytes where they continue the hashed prefix; what other connections wrote, read back.
        std::uint64_t read_from = from;
        if (!in_memory.empty() && range.begin == from && range.end <= prefix) {
          hasher_->update(in_memory);
          read_from = range.end;
        }
        in_memory = {};
        if (prefix > read_from) {
          partial_->read_range(read_from, prefix, [&](std::span<const std::byte> bytes) { hasher_->update(bytes); });
        }
      }
      guard.lock();
      hashed_up_to_ = prefix;
    }
  } catch (...) {
    if (!guard.owns_lock()) guard.lock();
    hashing_ = false;
    throw;
  }
  hashing_ = false;
  start_writeback();
}

void IncomingFile::advance_hash(const std::stop_token* stop) {
  // Only with no range of the file in flight (activate, verify): no connection is hashing it meanwhile.
  const std::uint64_t prefix = journal_->contiguous_prefix();
  if (prefix > hashed_up_to_) {
    const StageTimer hashing(settings_.clock, &StageClock::hashing_ns);
    partial_->read_range(hashed_up_to_, prefix, [&](std::span<const std::byte> bytes) {
      if (stop != nullptr && stop->stop_requested()) throw Error(ErrorCode::kInterrupted, "interrupted");
      hasher_->update(bytes);
    });
    hashed_up_to_ = prefix;
  }
  start_writeback();
}

void IncomingFile::start_writeback() {
  // Publishing waits for an fdatasync of the whole file. Left to the kernel, most of a file is still only in
  // memory when its last byte arrives, and files downloaded side by side all finish, and flush, at once: the
  // connections stall on the disk together. Asking the disk to write every 8 MiB of the hashed prefix as it
  // arrives leaves the fdatasync a few MiB, and caps the download's dirty memory by the same token (on a
  // large download, the kernel's dirty limit would otherwise throttle every writer at once). The step was
  // chosen by measurement: docs/benchmarks.md, "Reading the results", has the figures for it and for the
  // steps that lost.
  constexpr std::uint64_t kStep = 8 << 20;
  if (hashed_up_to_ < written_back_up_to_ + kStep) return;
  partial_->start_writeback(written_back_up_to_, hashed_up_to_);
  written_back_up_to_ = hashed_up_to_;
}

IncomingFile::Verdict IncomingFile::verify(const std::stop_token& stop) {
  std::unique_lock guard(mutex_);
  advance_hash();
  const std::string actual = hasher_->finish_hex();
  if (actual == hasher_->expected()) return Verdict::kVerified;
  const std::string mismatch = fmt::format("{}: {} mismatch: expected {}, got {}", file_.path, hasher_->algorithm(),
                                           hasher_->expected(), actual);
  discard_bytes_written();
  journal_->reset(journal_->validator());
  // Bytes flipped on the way (a bad NIC, a broken middlebox) land at another place each time, so each
  // corrupt download hashes to another value. The same wrong value twice is what the server stores, for a
  // file of a MiB or more. A small file has few places to flip: one flipped byte in a 250-byte config.json
  // lands where it landed before once in a few hundred corrupt pairs (the soak test met it), so it takes the
  // same wrong value three times in a row there.
  identical_wrong_hashes_ = actual == last_wrong_hash_ ? identical_wrong_hashes_ + 1 : 1;
  last_wrong_hash_ = actual;
  ++corrupt_passes_;
  constexpr std::uint64_t kFewPlacesToFlip = 1 << 20;
  const int identical_to_give_up = file_.size < kFewPlacesToFlip ? 3 : 2;
  if (identical_wrong_hashes_ >= identical_to_give_up) {
    lock_.reset();
    throw Error(ErrorCode::kVerificationFailed,
                fmt::format("{} {} in a row: the server's bytes differ from the listing; nothing was published",
                            mismatch, identical_to_give_up == 2 ? "twice" : "three times"),
                file_.path);
  }
  // Counted apart from restarts after an ETag change, which have their own limit: only corrupt downloads
  // use up the corruption budget, and the message counts exactly those.
  ++pass_;
  if (corrupt_passes_ >= settings_.max_passes) {
    lock_.reset();
    throw Error(ErrorCode::kVerificationFailed,
                fmt::format("{} (downloaded {} times, corrupted differently each time; nothing was published)",
                            mismatch, corrupt_passes_),
                file_.path);
  }
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const std::chrono::milliseconds delay =
      http::backoff_delay(corrupt_passes_, settings_.retry_base_delay, std::nullopt, unit(util::thread_random()));
  spdlog::warn("{}; the bytes were corrupted in transit: downloading it again in {:.1f}s (download {} of at most {})",
               mismatch, static_cast<double>(delay.count()) / 1000.0, pass_, settings_.max_passes);
  // The file's lock is kept while waiting; nothing else of the file runs (the scheduler holds it finishing).
  guard.unlock();
  if (!util::sleep_unless_stopped(delay, stop)) throw Error(ErrorCode::kInterrupted, "interrupted", file_.path);
  progress_.on_file_started(file_, 0);
  return Verdict::kStartOver;
}

void IncomingFile::publish(const PublishStep& publish) {
  std::lock_guard guard(mutex_);
  // Journal first: killed between the two, the partial file is whole and without a journal reads as the
  // complete prefix it is.
  journal_->remove();
  publish(file_, std::move(*partial_));
  partial_.reset();
  lock_.reset();
  progress_.on_file_done(file_);
}

void IncomingFile::discard_bytes_written() {
  progress_.on_bytes_discarded(file_, journal_->completed_bytes());
  partial_->restart();
  hasher_.emplace(file_);
  hashed_up_to_ = 0;
  written_back_up_to_ = 0;
}

bool IncomingFile::accept_validator(const std::string& origin, const std::string* etag) {
  if (etag == nullptr || etag->empty() || etag->rfind("W/", 0) == 0) return true;
  std::lock_guard guard(mutex_);
  if (changed_to_) return false;  // starting over: nothing is written until then
  const std::optional<store::BodyValidator>& recorded = journal_->validator();
  if (!recorded || recorded->origin != origin) {
    // Another server's ETags are not comparable (a re-resolve may land on another CDN host).
    journal_->set_validator({origin, *etag});
    return true;
  }
  if (recorded->etag == *etag) return true;
  changed_to_ = store::BodyValidator{origin, *etag};
  spdlog::warn(
      "{}: the file changed on the server (ETag {}, now {}); starting it over instead of splicing two versions",
      file_.path, recorded->etag, *etag);
  return false;
}

std::optional<std::string> IncomingFile::validator_for(const std::string& origin) const {
  std::lock_guard guard(mutex_);
  const std::optional<store::BodyValidator>& recorded = journal_->validator();
  if (!recorded || recorded->origin != origin || changed_to_) return std::nullopt;
  return recorded->etag;
}

bool IncomingFile::restart_requested() const {
  std::lock_guard guard(mutex_);
  return changed_to_.has_value();
}

void IncomingFile::start_over_after_change() {
  std::lock_guard guard(mutex_);
  const store::BodyValidator changed_to = *changed_to_;
  changed_to_.reset();
  discard_bytes_written();
  journal_->reset(changed_to);
  last_wrong_hash_.clear();  // hashed against other expected bytes: not comparable with the next attempt's
  identical_wrong_hashes_ = 0;
  ++pass_;
  if (++changes_ > 1) {
    throw Error(ErrorCode::kVerificationFailed,
                fmt::format("{}: the server keeps sending other bytes under the same URL (now ETag {}); "
                            "nothing was published",
                            file_.path, changed_to.etag),
                file_.path);
  }
  progress_.on_file_started(file_, 0);
}

void IncomingFile::abandon() {
  std::lock_guard guard(mutex_);
  // A journal that records nothing is no use to a resume; an empty partial file removes itself.
  if (journal_ && journal_->completed().empty()) journal_->remove();
  partial_.reset();
  journal_.reset();
  lock_.reset();
}

}  // namespace hfget::transfer
