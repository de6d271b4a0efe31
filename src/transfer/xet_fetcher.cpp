// SPDX-License-Identifier: MIT
#include "transfer/xet_fetcher.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <unordered_map>
#include <utility>

#include "hfget/error.hpp"
#include "http/range_answer.hpp"
#include "http/retrier.hpp"
#include "transfer/stage_clock.hpp"
#include "transfer/xet_range_sink.hpp"

namespace hfget::transfer {
namespace {

// Twice the bridge's 128 KiB: a batch is written before a chunk (≤ 128 KiB) that does not fit whole, so that a
// kill -9 leaves the file at a chunk boundary; at 128 KiB that cut the average write to ~96 KiB, and each write
// costs a journal entry and a lock. At 256 KiB writes average ~220 KiB; still fixed memory per connection.
constexpr std::size_t kBatchBytes = 256 << 10;
// A reconstruction names every term of the range and a URL per xorb range: ~300 bytes a term, and terms of a
// few MB each, so even the spec's 10 GB batches are a few hundred KB; 16 MiB is room for a file of tiny terms.
constexpr std::size_t kMaxReconstructionBytes = 16 << 20;
// Files whose Xet retries ran out one after the other before the rest of the download gives up on the CAS.
constexpr int kFilesFailedBeforeXetOff = 3;
constexpr std::uint64_t kMaxReconstructionSpan = 10ULL << 30;
// At most this many ranges of a file have their plans asked ahead of the one a connection is fetching
// (ask_ahead): four askers answer four at once.
constexpr std::size_t kLookahead = 4;
// And the first ranges of this many files that open next.
constexpr std::size_t kFilesAhead = 4;

Error interrupted(const RemoteFile& file) {
  return Error(ErrorCode::kInterrupted, "interrupted", file.path);
}

// Where the plan asked for bytes [begin, end) of a file ends: the spec's advice for large files is at most
// about 10 GB of a file at a time.
std::uint64_t span_end(std::uint64_t begin, std::uint64_t end) {
  return std::min<std::uint64_t>(end, begin + kMaxReconstructionSpan);
}

bool sheds_load(long status) {
  return status == 429 || status == 503;
}

// Whether term `i` (> 0) is fetched by the same GET as the term before it: the same fetch entry, and chunks
// that follow on.
bool same_get_as_previous(const xet::Reconstruction& plan, std::size_t i) {
  return plan.terms[i].fetch == plan.terms[i - 1].fetch && plan.terms[i].chunk_begin == plan.terms[i - 1].chunk_end;
}

// The last term of the plan that starts a GET of its own (0: one GET serves every term), and the file offset
// where it starts, for a plan that begins at file offset `first`.
std::pair<std::size_t, std::uint64_t> last_get_start(const xet::Reconstruction& plan, std::uint64_t first) {
  std::pair<std::size_t, std::uint64_t> last{0, first};
  std::uint64_t offset = first - plan.offset_into_first_range;
  for (std::size_t i = 0; i < plan.terms.size(); ++i) {
    if (i > 0 && !same_get_as_previous(plan, i)) last = {i, offset};
    offset += plan.terms[i].data_bytes;
  }
  return last;
}

}  // namespace

XetFetcher::XetFetcher(const XetSettings& settings, XetShared& shared, std::unique_ptr<SourceConnection> bridge,
                       std::unique_ptr<http::Transport> transport, const http::TransportSettings& limits,
                       ProgressSink& progress, std::stop_token stop)
    : settings_(settings),
      shared_(shared),
      bridge_(std::move(bridge)),
      transport_(std::move(transport)),
      progress_(progress),
      progress_bytes_(http::progress_threshold(limits.speed_limit, limits.stall_timeout)),
      stop_(std::move(stop)) {}

void XetFetcher::fetch(RangeTask& task) {
  auto& state = static_cast<SourcedFile&>(*task.source);  // the Xet source made it
  const RemoteFile& file = task.file->remote();
  if (shared_.xet_off && state.over_xet()) fall_back(task, state, "the CAS failed for the files before it");
  if (state.first_to_report()) {
    const bool over_xet = state.over_xet();
    progress_.on_file_path(file, over_xet ? TransferPath::kXet : TransferPath::kBridge,
                           over_xet        ? "the file is stored in Xet"
                           : file.xet_hash ? "Xet is not available for this download"
                                           : "the file is not stored in Xet");
  }
  http::Retrier retrier(settings_.max_attempts, settings_.retry_base_delay, stop_, settings_.retry_max_time);
  while (true) {
    if (!state.over_xet()) {
      task.requested_until = 0;  // the bridge asks for the whole range at once
      return bridge_->fetch(task);
    }
    if (stop_.stop_requested()) throw interrupted(file);
    if (task.cancelled || task.position >= task.end || task.file->restart_requested()) return;
    const std::uint64_t before = task.position;
    const std::uint64_t copied_before = bytes_copied_;
    const std::optional<Failure> failure = fetch_once(task, *file.xet_hash);
    if (task.position - before >= progress_bytes_) retrier.note_progress();
    // The CAS serves, unless all of that progress was copied from local files (the xorbs may still fail).
    if (task.position - before > bytes_copied_ - copied_before) shared_.files_failed_in_a_row = 0;
    if (stop_.stop_requested()) throw interrupted(file);
    // Stopped because the file failed elsewhere or changed: not the CAS's doing.
    if (task.cancelled || task.file->restart_requested()) return;
    if (!failure) continue;
    if (failure->push_back && task.budget != nullptr) task.budget->note_push_back();
    if (failure->cas_unavailable) {
      fall_back(task, state, failure->reason);
      continue;
    }
    const auto announce = [&](std::chrono::milliseconds delay) {
      progress_.on_retry(file, retrier.attempts_failed(), "Xet: " + failure->reason, delay);
    };
    if (retrier.wait_before_retry(failure->attempt, failure->retry_after, announce)) continue;
    if (stop_.stop_requested()) throw interrupted(file);
    // A CAS that keeps failing file after file is given up on for the rest of the download: each further
    // file would spend its retries (minutes of backoff) finding out again.
    if (++shared_.files_failed_in_a_row >= kFilesFailedBeforeXetOff) shared_.xet_off = true;
    fall_back(task, state, fmt::format("{} (after {} attempts)", failure->reason, retrier.attempts_failed()));
  }
}

void XetFetcher::fall_back(RangeTask& task, SourcedFile& state, const std::string& why) {
  if (!state.fall_back_to_bridge()) return;  // another connection of the file did
  const RemoteFile& file = task.file->remote();
  // The first as a warning, with the cause; when the CAS is down every Xet file follows, each with a line of
  // its own in the log (-v) and a file_path event, and the warning has said why.
  if (!shared_.fallback_said.exchange(true)) {
    spdlog::warn("{}: Xet: {}; fetching it (and any other file the CAS cannot serve) over the LFS bridge", file.path,
                 why);
  } else {
    spdlog::info("{}: Xet: {}; fetching it over the LFS bridge", file.path, why);
  }
  progress_.on_file_path(file, TransferPath::kBridge, "fell back from Xet: " + why);
}

void XetFetcher::ask_ahead(RangeTask& task, const std::string& xet_hash) {
  // The ranges the scheduler hands out next in this file start where this one now ends, one after the
  // other: their plans are asked while this range downloads, so that the connections that take them do not
  // wait a CAS round trip before their first xorb byte. One, while each range is planned before the next is
  // taken (one connection, or one per file): asked from where this range now ends, after it took the rest
  // of its last chunk, so nothing is fetched twice. Several, when more connections than files take ranges
  // within moments of each other (a file just opened, the last files of a download): each is planned where
  // the scheduler will cut it, and the one before keeps its end (fetch_once), fetching the chunk that
  // straddles it a second time. A plan already asked is not asked again: in a steady download each range
  // asks one new plan.
  std::vector<ReconstructionPrefetch::Wanted> wanted;  // asked in one go: one lock, not one per range
  const auto ask = [&wanted](const std::string& hash, store::ByteRange range) {
    wanted.push_back({hash, range.begin, span_end(range.begin, range.end) - 1});
  };
  const std::size_t depth = std::min(task.extension->takers_per_file(), kLookahead);
  store::ByteRange next = task.extension->queued_from(task, task.end);
  for (std::size_t i = 0; i < depth && next.end > next.begin; ++i) {
    ask(xet_hash, next);
    next = task.extension->queued_from(task, next.end);
  }
  // The first ranges of the next files to open: a file opens when another finishes, and near the end of a
  // download, or of a run of files that finish together, files open faster than one CAS round trip apart. Asked
  // from one file's first range only, the next file's plans came too late, or never: on the GPU server the
  // first ranges of the last third of the files were all asked by their connections, each a round trip waited
  // for. Asked on every range: a plan already known is not asked again.
  for (const UpcomingRanges& upcoming : task.extension->next_files_start(kFilesAhead, depth)) {
    if (!upcoming.file->xet_hash) continue;
    for (const store::ByteRange& range : upcoming.ranges) ask(*upcoming.file->xet_hash, range);
  }
  shared_.prefetch->ask_ahead(wanted);
}

void XetFetcher::ask_ahead_if_due(RangeTask& task) {
  if (const std::string* xet_hash = std::exchange(ask_ahead_for_, nullptr)) ask_ahead(task, *xet_hash);
}

std::optional<XetFetcher::Failure> XetFetcher::fetch_once(RangeTask& task, const std::string& xet_hash) {
  const std::uint64_t first = task.position;
  std::uint64_t end = span_end(first, task.end);
  xet::Reconstruction plan;
  {
    const StageTimer planning(settings_.clock, &StageClock::planning_ns);
    std::optional<xet::Reconstruction> ahead =
        shared_.prefetch != nullptr ? shared_.prefetch->take(xet_hash, first, end - 1, stop_) : std::nullopt;
    if (ahead) {
      plan = std::move(*ahead);
    } else {
      spdlog::debug("{}: no plan asked ahead for bytes {}-{}; asking the CAS", task.file->remote().path, first,
                    end - 1);
      const auto asked_at = std::chrono::steady_clock::now();
      std::optional<Failure> failure = ask_reconstruction(xet_hash, first, end - 1, plan);
      const auto spent = static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - asked_at).count());
      ++(planned_once_ ? shared_.later_asks : shared_.first_asks);
      (planned_once_ ? shared_.later_ask_ns : shared_.first_ask_ns) += spent;
      if (failure) return failure;
    }
    planned_once_ = true;
  }
  // What a range of the file can decode to: more than the rest of the file is a CAS that ignored the Range
  // (or serves another file), whose bytes would land at the wrong offsets.
  const std::uint64_t size = task.file->remote().size;
  if (plan.terms.empty() || plan.offset_into_first_range > first ||
      plan.data_bytes() - plan.offset_into_first_range > size - first) {
    return Failure{.reason = fmt::format("the reconstruction of bytes {}-{} does not fit the file's {} bytes", first,
                                         end - 1, size),
                   .cas_unavailable = true};
  }
  // The ranges after this one may already be planned, asked ahead as the scheduler cuts them (below): then
  // this range keeps its end, so that the range cut there is the one planned. It fetches the chunk that
  // straddles its end, and so does the next one (a chunk, ~64 KiB, per range): cheaper than the CAS round
  // trip the next range would wait for otherwise.
  const bool next_planned = shared_.prefetch != nullptr && shared_.prefetch->asked_from(xet_hash, task.end);
  // A range that crosses into another xorb fetches what lies past the crossing with a GET of its own, and
  // the next range starts with one more. Ended at the crossing, with the bytes after it handed back to the
  // next range (while no connection has that one yet), the range is one GET and the next still one: one body
  // fewer per crossing (a large file crosses into another xorb every 64 MiB or so). Not when that would keep
  // less than a quarter of the range: it would only make more ranges.
  if (const auto [term, offset] = last_get_start(plan, first);
      !next_planned && term > 0 && end == task.end && offset - first >= (end - first) / 4 &&
      task.extension != nullptr && task.extension->give_back(task, offset)) {
    plan.terms.resize(term);
    end = offset;
  }
  // Where the plan's last chunk ends: past `end` when `end` falls inside a chunk. That chunk is fetched whole
  // either way, so the range takes the rest of it while no other connection has it; the next range then
  // starts on a chunk boundary, and nothing is fetched twice.
  const std::uint64_t plan_end = first + (plan.data_bytes() - plan.offset_into_first_range);
  if (!next_planned && end == task.end && plan_end > end && task.extension != nullptr) {
    task.extension->extend(task, plan_end);
  }
  // The next ranges' plans are asked once this range's first xorb GET is answered, not before it is sent:
  // asking them wakes askers (and at the start of a download starts a dozen threads, each with a connection
  // to the CAS), and done first that work lay between a connection's plan and its first GET. On the 2-core
  // machine the first GETs reached nginx ~25 ms after their plans, against ~14 ms from the bridge's resolve
  // to its first body. One round trip later is still long before the range ends.
  ask_ahead_for_ = shared_.prefetch != nullptr && task.extension != nullptr && !shared_.xet_off ? &xet_hash : nullptr;
  std::optional<Failure> failure = fetch_terms(task, plan, end);
  ask_ahead_if_due(task);  // no GET was answered: every term copied from local files, or the first GET failed
  if (failure) return failure;
  if (task.cancelled || task.file->restart_requested() || task.position >= std::min<std::uint64_t>(task.end, end)) {
    return std::nullopt;
  }
  if (replan_) return std::nullopt;  // the range was split: its new end is asked for
  // Every term was served and decoded, yet they end before the bytes asked for: a CAS that disagrees with
  // the listing's size. Asked again from where the file stands; no progress uses up the retries.
  return Failure{.attempt = {http::TransportFailure::kConnectionLost, 0, false},
                 .reason = fmt::format("the reconstruction of bytes {}-{} ended at byte {}", first, end - 1,
                                       task.position.load())};
}

std::optional<XetFetcher::Failure> XetFetcher::ask_reconstruction(const std::string& xet_hash, std::uint64_t first,
                                                                  std::uint64_t last, xet::Reconstruction& plan,
                                                                  bool v1) {
  std::shared_ptr<const hub::XetAccess> access;
  try {
    access = settings_.tokens->current();
  } catch (const Error& error) {
    if (error.code() == ErrorCode::kInterrupted) throw;
    // A Hub blip while the token is renewed: retried like one, the bridge only once the retries are spent.
    return Failure{.attempt = {http::TransportFailure::kConnectionLost, 0, false},
                   .reason = std::string("no read token: ") + error.what()};
  }
  const bool v2 = !v1 && !shared_.v1_only;
  http::RequestSpec spec;
  spec.url = access->cas_url + (v2 ? "/v2/reconstructions/" : "/v1/reconstructions/") + xet_hash;
  spec.bearer_token = &access->token;  // the CAS's own URL: the one place the Xet token goes
  spec.range_from = first;
  spec.range_last = last;
  spec.extra_headers = {"Accept: application/json"};
  http::StringSink sink(kMaxReconstructionBytes);
  ++shared_.plans_asked;
  const http::HttpResponse response = transport_->get(spec, sink, stop_);
  spdlog::debug("GET {} (bytes {}-{}) -> {}", spec.url, first, last,
                http::describe(response.failure, response.failure_message, response.status));
  if (response.failure == http::TransportFailure::kCancelled) throw Error(ErrorCode::kInterrupted, "interrupted");
  if (sink.overflowed()) {
    return Failure{.reason = fmt::format("the CAS's reconstruction is over {} bytes", kMaxReconstructionBytes),
                   .cas_unavailable = true};
  }
  if (response.failure != http::TransportFailure::kNone) return transport_failure(response);
  shared_.cas_answered = true;
  const long status = response.status;
  if (status == 200 || status == 206) {
    try {
      plan = v2 ? xet::parse_reconstruction_v2(sink.text()) : xet::parse_reconstruction_v1(sink.text());
    } catch (const xet::ReconstructionError& error) {
      return Failure{.attempt = {http::TransportFailure::kConnectionLost, 0, false},
                     .reason = std::string("unusable reconstruction: ") + error.what()};
    }
    if (v1 && !shared_.v1_only.exchange(true)) spdlog::info("Xet: the CAS has no V2 reconstructions; asking V1");
    return std::nullopt;
  }
  // As hf_xet does: a CAS without V2 serves V1. Asked again at once, without counting an attempt; the whole
  // download switches once V1 has answered (a 404 can also mean a file the CAS does not have).
  if (v2 && (status == 404 || status == 501)) return ask_reconstruction(xet_hash, first, last, plan, true);
  return status_failure(response, access);
}

std::optional<xet::Reconstruction> XetFetcher::plan_ahead(const std::string& xet_hash, std::uint64_t first,
                                                          std::uint64_t last) {
  xet::Reconstruction plan;
  if (ask_reconstruction(xet_hash, first, last, plan)) return std::nullopt;
  return plan;
}

XetFetcher::Failure XetFetcher::transport_failure(const http::HttpResponse& response) const {
  Failure failure{.attempt = {response.failure, 0, !shared_.cas_answered},
                  .reason = "the CAS: " + http::describe(response.failure, response.failure_message, 0),
                  .push_back = response.failure == http::TransportFailure::kConnectionLost};
  // Refused or unresolvable before it ever answered: a CAS that is down, not a blip.
  failure.cas_unavailable = http::next_step(failure.attempt) == http::NextStep::kGiveUp;
  return failure;
}

XetFetcher::Failure XetFetcher::status_failure(const http::HttpResponse& response,
                                               const std::shared_ptr<const hub::XetAccess>& access) const {
  const long status = response.status;
  const std::optional<http::RequestedWait> requested = http::requested_wait(response);
  Failure failure{.attempt = {http::TransportFailure::kNone, status, false},
                  .reason = fmt::format("the CAS answered HTTP {} to the reconstruction", status),
                  .retry_after = requested ? std::optional(requested->wait) : std::nullopt,
                  .push_back = sheds_load(status)};
  if (status == 401) {
    settings_.tokens->rejected(access);  // the next attempt asks the Hub for a new token
    failure.attempt.http_status = 503;   // retried like a blip, within the same attempts
  } else if (http::next_step(failure.attempt) == http::NextStep::kGiveUp) {
    failure.cas_unavailable = true;  // 404 (the CAS has no such file), 403, 416: the bridge may still serve it
  }
  return failure;
}

namespace {

// Chunks that a later term of the same reconstruction names again (same xorb, same chunk), kept once decoded,
// within a budget: a file with repeated content (runs of zeros, most often, which a writer stores once) is
// fetched once. A presigned range must be fetched as given, so without this every repeat would fetch its
// whole range again, up to the 64 MiB of a xorb, to use one chunk of it. Only xorbs that more than one term
// names are indexed, and no more than kMaxIndexedChunks chunks of them (the parser bounds chunk indices, not
// how many terms name them), so a hostile plan costs a bounded index and, past it, only refetches.
class ChunkMemory {
 public:
  static constexpr std::uint64_t kBudgetBytes = 8 << 20;
  static constexpr std::uint32_t kMaxExtraChunks = 64;  // decoded past a run for later terms: 8 MiB at most
  static constexpr std::size_t kMaxIndexedChunks = 1 << 18;

  explicit ChunkMemory(const xet::Reconstruction& plan) : plan_(plan) {
    std::map<std::string, std::uint32_t> terms_per_xorb;
    for (const xet::Term& term : plan.terms) ++terms_per_xorb[term.xorb_hash];
    std::size_t indexed = 0;
    for (std::size_t i = 0; i < plan.terms.size() && indexed <= kMaxIndexedChunks; ++i) {
      const xet::Term& term = plan.terms[i];
      if (terms_per_xorb[term.xorb_hash] < 2) continue;
      const std::uint64_t xorb = xorb_number(term.xorb_hash);
      for (std::uint32_t c = term.chunk_begin; c < term.chunk_end && indexed <= kMaxIndexedChunks; ++c, ++indexed) {
        last_use_[key(xorb, c)] = i;
      }
    }
  }

  // Every chunk of `term` is kept, and they add up to its length.
  bool holds(std::size_t term) const {
    const xet::Term& t = plan_.terms[term];
    const auto xorb = xorbs_.find(t.xorb_hash);
    if (xorb == xorbs_.end()) return false;
    std::uint64_t bytes = 0;
    for (std::uint32_t c = t.chunk_begin; c < t.chunk_end; ++c) {
      const auto it = kept_.find(key(xorb->second, c));
      if (it == kept_.end()) return false;
      bytes += it->second.size();
    }
    return bytes == t.data_bytes;
  }
  // Writes a term held in memory (each chunk told to `layout`, if set, as a fetched one); chunks no later term
  // names are let go.
  void write(std::size_t term, TaskWriter& writer, xet::ChunkLayoutBuilder* layout) {
    const xet::Term& t = plan_.terms[term];
    const std::uint64_t xorb = xorbs_.at(t.xorb_hash);
    for (std::uint32_t c = t.chunk_begin; c < t.chunk_end; ++c) {
      const auto it = kept_.find(key(xorb, c));
      if (layout != nullptr) {
        layout->add(writer.stream_offset(), t.xorb_hash, c, static_cast<std::uint32_t>(it->second.size()));
      }
      writer.emit(it->second);
      if (last_use_[it->first] <= term) {
        budget_ += it->second.size();
        kept_.erase(it);
      }
    }
    writer.flush();
  }
  // Whether a chunk decoded while fetching terms [.., run_end) is to be kept: a term after the run names it,
  // and the memory has room.
  bool wants(const std::string& xorb_hash, std::uint32_t chunk, std::size_t run_end, std::size_t data_bytes) const {
    const auto xorb = xorbs_.find(xorb_hash);
    if (xorb == xorbs_.end()) return false;
    const std::uint64_t k = key(xorb->second, chunk);
    const auto use = last_use_.find(k);
    return use != last_use_.end() && use->second >= run_end && data_bytes <= budget_ && kept_.count(k) == 0;
  }
  void offer(const std::string& xorb_hash, std::uint32_t chunk, std::size_t run_end, std::span<const std::byte> data) {
    if (!wants(xorb_hash, chunk, run_end, data.size())) return;
    budget_ -= data.size();
    kept_.emplace(key(xorbs_.at(xorb_hash), chunk), std::vector<std::byte>(data.begin(), data.end()));
  }

 private:
  static std::uint64_t key(std::uint64_t xorb, std::uint32_t chunk) { return (xorb << 32) | chunk; }
  std::uint64_t xorb_number(const std::string& hash) {
    return xorbs_.try_emplace(hash, static_cast<std::uint64_t>(xorbs_.size())).first->second;
  }

  const xet::Reconstruction& plan_;
  std::map<std::string, std::uint64_t> xorbs_;               // the indexed xorbs, numbered
  std::unordered_map<std::uint64_t, std::size_t> last_use_;  // (xorb, chunk) → the last term that names it
  std::unordered_map<std::uint64_t, std::vector<std::byte>> kept_;
  std::uint64_t budget_ = kBudgetBytes;
};

}  // namespace

std::optional<XetFetcher::Failure> XetFetcher::fetch_terms(RangeTask& task, const xet::Reconstruction& plan,
                                                           std::uint64_t asked_end) {
  replan_ = false;
  batch_.reserve(kBatchBytes);  // here, not when made: the askers that ask plans ahead never fetch a term
  std::uint64_t term_offset = task.position - plan.offset_into_first_range;  // where plan.terms[first] starts
  TaskWriter writer(task, batch_, plan.offset_into_first_range);
  struct CountStored {  // however this ends, what was written counts
    const TaskWriter& writer;
    XetShared& shared;
    ~CountStored() { shared.bytes_stored += writer.stored(); }
  } count_stored{writer, shared_};
  ChunkMemory memory(plan);
  auto& state = static_cast<SourcedFile&>(*task.source);
  LocalChunks* local = state.copy_allowed() ? settings_.local_chunks : nullptr;
  const auto held_locally = [&](std::size_t term) {
    return local != nullptr ? local->find(plan.terms[term]) : std::nullopt;
  };
  // The local span of the term that ended the previous run (next_from_term), found there: not looked up twice.
  std::optional<LocalChunks::Span> next_from;
  std::size_t next_from_term = 0;
  for (std::size_t first = 0; first < plan.terms.size();) {
    if (task.cancelled || task.file->restart_requested() || writer.reached_end()) return std::nullopt;
    if (memory.holds(first)) {
      term_offset += plan.terms[first].data_bytes;
      memory.write(first++, writer, state.chunk_layout());
      continue;
    }
    const std::optional<LocalChunks::Span> from =
        next_from && next_from_term == first ? std::exchange(next_from, std::nullopt) : held_locally(first);
    if (from) {
      const std::uint64_t before = writer.accepted();
      const CopyOutcome copied = copy_term(*from, plan.terms[first], writer, state.chunk_layout(), copy_buffer_);
      const std::uint64_t copied_bytes = writer.accepted() - before;
      shared_.bytes_copied += copied_bytes;
      bytes_copied_ += copied_bytes;
      if (copied_bytes > 0) task.file->note_copied(copied_bytes);
      if (copied == CopyOutcome::kCopied) {
        term_offset += plan.terms[first++].data_bytes;
        continue;
      }
      local->forget(*from);  // not as recorded: no connection copies from it again
      if (copied == CopyOutcome::kCutShort) {
        // Part of the term is written: the range goes on from where the file stands, fetched this time.
        writer.flush();
        return Failure{
            .attempt = {http::TransportFailure::kConnectionLost, 0, false},
            .reason = fmt::format("{} could not be read while chunks were copied from it", from->file->string())};
      }
      // Unreadable: nothing written, the term is fetched below (another file may still serve later terms).
    }
    // A run: consecutive terms of one fetch entry whose chunks follow each other, served by one GET; a term
    // that a local file holds ends it (it is copied instead).
    std::size_t end = first + 1;
    while (end < plan.terms.size() && same_get_as_previous(plan, end)) {
      next_from = held_locally(end);
      next_from_term = end;
      if (next_from) break;
      ++end;
    }
    // The fetch is decoded past the run's last term where a later term names chunks it holds there (the tail
    // of a run of zeros, say), up to what the memory can keep.
    const xet::XorbFetch& fetch = plan.fetches[plan.terms[first].fetch];
    std::uint32_t until = plan.terms[end - 1].chunk_end;
    for (std::size_t k = end; k < plan.terms.size(); ++k) {
      if (plan.terms[k].fetch == plan.terms[first].fetch) until = std::max(until, plan.terms[k].chunk_end);
    }
    until = std::min({until, fetch.chunk_end, plan.terms[end - 1].chunk_end + ChunkMemory::kMaxExtraChunks});
    const std::string& xorb = plan.terms[first].xorb_hash;
    const ChunkKeeper keep{
        .wants = [&memory, &xorb, end](std::uint32_t chunk,
                                       std::uint32_t data_bytes) { return memory.wants(xorb, chunk, end, data_bytes); },
        .keep = [&memory, &xorb, end](std::uint32_t chunk,
                                      std::span<const std::byte> data) { memory.offer(xorb, chunk, end, data); }};
    std::uint64_t run_end = term_offset;
    for (std::size_t k = first; k < end; ++k) run_end += plan.terms[k].data_bytes;
    // Said before the request is sent, and read back with the range's end in one step (under the scheduler's
    // lock): a tail split either came first, and is seen here, or comes after, and then cuts at run_end or
    // beyond, never inside this request.
    task.requested_until = run_end;
    const std::uint64_t task_end =
        task.extension != nullptr ? task.extension->end_after_request(task) : task.end.load();
    // A split lowered the range's end into this run since the plan was asked for: a new plan, cut at the new
    // end, fetches up to it instead of a run whose bytes past it the next range fetches too.
    if (task_end < asked_end && run_end > task_end) {
      writer.flush();
      replan_ = true;
      return std::nullopt;
    }
    if (std::optional<Failure> failure = fetch_run(task, plan, first, end, writer, keep, until)) return failure;
    term_offset = run_end;
    first = end;
  }
  writer.flush();
  return std::nullopt;
}

std::optional<XetFetcher::Failure> XetFetcher::fetch_run(RangeTask& task, const xet::Reconstruction& plan,
                                                         std::size_t first_term, std::size_t end_term,
                                                         TaskWriter& writer, ChunkKeeper keep,
                                                         std::uint32_t decode_until) {
  const xet::XorbFetch& fetch = plan.fetches[plan.terms[first_term].fetch];
  XetRangeSink sink(plan, first_term, end_term, writer, settings_.rate_limiter, stop_, std::move(keep), decode_until,
                    static_cast<SourcedFile&>(*task.source).chunk_layout());
  http::RequestSpec spec;
  spec.url = fetch.url;  // presigned: no token, ever
  spec.range_from = fetch.byte_begin;
  spec.range_last = fetch.byte_end - 1;
  // The sink, and once the answer's first bytes are in (the request is out), the plans asked ahead (fetch_once).
  class AskAheadOnAnswer final : public http::BodySink {
   public:
    AskAheadOnAnswer(http::BodySink& sink, std::function<void()> then) : sink_(sink), then_(std::move(then)) {}
    void on_response_start(const http::HttpResponse& head) override {
      sink_.on_response_start(head);
      then_();
    }
    bool on_body(std::span<const std::byte> bytes) override { return sink_.on_body(bytes); }
    void on_read_done() override { sink_.on_read_done(); }

   private:
    http::BodySink& sink_;
    std::function<void()> then_;
  } answered(sink, [this, &task] { ask_ahead_if_due(task); });
  http::HttpResponse response;
  try {
    response = transport_->get(spec, answered, stop_);
  } catch (...) {
    writer.flush();  // what was decoded before the error is kept for the resume
    throw;
  }
  const bool finished = sink.finished();
  shared_.bytes_fetched += sink.received();
  spdlog::debug("{}: GET xorb {} bytes {}-{} -> {}", task.file->remote().path, fetch.xorb_hash.substr(0, 12),
                fetch.byte_begin, fetch.byte_end - 1,
                http::describe(response.failure, response.failure_message, response.status));
  if (response.failure == http::TransportFailure::kCancelled) throw interrupted(task.file->remote());
  if (finished) return std::nullopt;
  // Stopped because the file failed on another connection, or changed: not this fetch's failure.
  if (task.cancelled || task.file->restart_requested()) return std::nullopt;
  const long status = response.failure == http::TransportFailure::kNone ? response.status : 0;
  const std::string what =
      fmt::format("xorb {} bytes {}-{}", fetch.xorb_hash.substr(0, 12), fetch.byte_begin, fetch.byte_end - 1);
  if (sink.rejection()) {
    return Failure{.attempt = {http::TransportFailure::kConnectionLost, 0, false}, .reason = *sink.rejection()};
  }
  if (status >= 200 && status < 300) {  // the body ended before the range did
    return Failure{.attempt = {http::TransportFailure::kConnectionLost, 0, false},
                   .reason = fmt::format("{}: the body ended after {} bytes", what, sink.received()),
                   .push_back = true};
  }
  const std::optional<http::RequestedWait> requested =
      response.failure == http::TransportFailure::kNone ? http::requested_wait(response) : std::nullopt;
  Failure failure{.attempt = {response.failure, status, false},
                  .reason = fmt::format("{}: {}", what,
                                        http::describe(response.failure, response.failure_message, response.status)),
                  .retry_after = requested ? std::optional(requested->wait) : std::nullopt,
                  .push_back = sheds_load(status) || response.failure == http::TransportFailure::kConnectionLost};
  // An expired or refused presigned URL: the next attempt's reconstruction brings new URLs.
  if (status == 401 || status == 403 || status == 404 || status == 410) failure.attempt.http_status = 503;
  return failure;
}

}  // namespace hfget::transfer
