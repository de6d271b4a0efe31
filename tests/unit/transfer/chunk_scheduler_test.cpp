// SPDX-License-Identifier: MIT
// The scheduler against a real cache layout in a temp dir, with the network replaced by writing the
// expected bytes for each task: which ranges it hands out, how it splits the tail, how it ends a file.
#include "transfer/chunk_scheduler.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <initializer_list>
#include <sstream>

#include "crypto/digest.hpp"
#include "store/partial_claim.hpp"
#include "support/temp_dir.hpp"

namespace hfget::transfer {
namespace {

using test_support::TempDir;
constexpr std::uint64_t kMiB = 1 << 20;
const std::string kCommit(40, 'c');

struct Fixture {
  TempDir dir;
  RepoId repo{RepoType::kModel, "org/name"};
  std::unique_ptr<store::Layout> layout = prepared(store::make_cache_layout(dir.path(), repo, kCommit));
  ProgressSink progress;

  static std::unique_ptr<store::Layout> prepared(std::unique_ptr<store::Layout> layout) {
    layout->prepare(Snapshot{kCommit, {}}, {}, "main");
    return layout;
  }
  std::map<std::string, std::string> contents;

  RemoteFile add_file(const std::string& path, std::size_t size) {
    std::string content(size, '\0');
    for (std::size_t i = 0; i < size; ++i) content[i] = static_cast<char>((i * 131 + path.size()) & 0xFF);
    crypto::Digest sha = crypto::Digest::sha256();
    sha.update(std::as_bytes(std::span(content.data(), content.size())));
    RemoteFile file;
    file.path = path;
    file.size = size;
    file.blob_id = std::string(40, '0');
    file.lfs_sha256 = sha.finish_hex();
    file.lfs_size = size;
    contents[path] = content;
    return file;
  }

  // No byte source: the test fetches by hand.
  ScheduledFile job(const RemoteFile& file, IncomingFileSettings settings = {}) {
    return {std::make_unique<IncomingFile>(file, *layout, progress, settings), nullptr};
  }

  // One job per file, in the order given (the order the scheduler opens them).
  std::vector<ScheduledFile> jobs(std::initializer_list<RemoteFile> files) {
    std::vector<ScheduledFile> all;
    for (const RemoteFile& file : files) all.push_back(job(file));
    return all;
  }

  // The publish stage into whatever layout the current run has.
  PublishStep publish() {
    return [this](const RemoteFile& file, store::PartialFile&& bytes) { layout->publish(file, std::move(bytes)); };
  }

  // A later run is another process, with a layout of its own (which lists the folders afresh).
  void start_new_run() { layout = prepared(store::make_cache_layout(dir.path(), repo, kCommit)); }

  // Stands in for RangeFetcher::fetch: the right bytes for the task's range.
  void fetch(RangeTask& task) {
    const std::string& content = contents.at(task.file->remote().path);
    const std::uint64_t end = task.end;
    const std::uint64_t begin = task.position;
    task.file->store(begin, std::as_bytes(std::span(content.data() + begin, end - begin)));
    task.position = end;
  }

  // Stands in for a fetch whose bytes were corrupted on the way: the byte at `flipped` arrives inverted.
  void fetch_flipped(RangeTask& task, std::uint64_t flipped) {
    std::string content = contents.at(task.file->remote().path);
    if (flipped >= task.position && flipped < task.end) content[flipped] = static_cast<char>(~content[flipped]);
    const std::uint64_t end = task.end;
    const std::uint64_t begin = task.position;
    task.file->store(begin, std::as_bytes(std::span(content.data() + begin, end - begin)));
    task.position = end;
  }

  // A killed run's partial file carries its owner's PID, here the PID of this very test: give it the
  // shared name (what older runs left, always free to claim), as if its owner were gone.
  void orphan_partials(const RemoteFile& file) const {
    const std::filesystem::path shared = layout->partial_path(file);
    for (const store::PartialCandidate& candidate : store::find_partials(shared)) {
      std::error_code no_journal;
      std::filesystem::rename(candidate.journal, store::journal_path_for(shared), no_journal);
      std::filesystem::rename(candidate.partial, shared);
    }
  }

  std::string blob(const RemoteFile& file) const {
    std::ifstream in(dir.path() / "models--org--name" / "blobs" / file.etag(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

TEST(ChunkScheduler, CutsALargeFileIntoChunksAndPublishesItWhole) {
  Fixture f;
  const RemoteFile file = f.add_file("big.safetensors", 10 * kMiB + 123);
  std::vector<ScheduledFile> jobs;
  jobs.push_back(f.job(file));
  ChunkScheduler scheduler(std::move(jobs), {8, 3 * kMiB, kMiB}, f.publish(), {});
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  while (RangeTask* task = scheduler.next()) {
    ranges.emplace_back(task->begin, task->end.load());
    f.fetch(*task);
    scheduler.done(task, std::nullopt);
  }
  EXPECT_EQ(ranges.size(), 4U);
  EXPECT_EQ(ranges.front().first, 0U);
  EXPECT_EQ(ranges.back().second, file.size);
  EXPECT_EQ(f.blob(file), f.contents[file.path]);
  EXPECT_FALSE(scheduler.errors()[0].has_value());
  EXPECT_EQ(scheduler.files_fetched(), 1U);
}

TEST(ChunkScheduler, GivesEachConnectionAFileOfItsOwnBeforeTwoShareOne) {
  Fixture f;
  const RemoteFile a = f.add_file("a.safetensors", 3 * kMiB);
  const RemoteFile b = f.add_file("bb.safetensors", 3 * kMiB);  // another length: other bytes, another blob
  std::vector<ScheduledFile> jobs;
  jobs.push_back(f.job(a));
  jobs.push_back(f.job(b));
  ChunkScheduler scheduler(std::move(jobs), {2, kMiB, kMiB}, f.publish(), {});
  RangeTask* first = scheduler.next();
  RangeTask* second = scheduler.next();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->file->remote().path, a.path);
  EXPECT_EQ(second->file->remote().path, b.path) << "the second connection opens a file of its own";
  // More connections than open files: the extra one joins the first of those with the fewest connections.
  RangeTask* third = scheduler.next();
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(third->file->remote().path, a.path);
  EXPECT_EQ(third->begin, kMiB);
  // A connection done with its chunk takes the next chunk of the file nobody works on: its own. The file's
  // bytes arrive in order.
  f.fetch(*second);
  scheduler.done(second, std::nullopt);
  RangeTask* next_of_b = scheduler.next();
  ASSERT_NE(next_of_b, nullptr);
  EXPECT_EQ(next_of_b->file->remote().path, b.path);
  EXPECT_EQ(next_of_b->begin, kMiB);
  for (RangeTask* task : {first, third, next_of_b}) {
    f.fetch(*task);
    scheduler.done(task, std::nullopt);
  }
  while (RangeTask* task = scheduler.next()) {
    f.fetch(*task);
    scheduler.done(task, std::nullopt);
  }
  EXPECT_EQ(f.blob(a), f.contents[a.path]);
  EXPECT_EQ(f.blob(b), f.contents[b.path]);
}

TEST(ChunkScheduler, HandsTheSecondHalfOfTheLargestRangeToAnIdleConnection) {
  Fixture f;
  const RemoteFile file = f.add_file("big.safetensors", 8 * kMiB);
  std::vector<ScheduledFile> jobs;
  jobs.push_back(f.job(file));
  ChunkScheduler scheduler(std::move(jobs), {8, 8 * kMiB, kMiB}, f.publish(), {});
  RangeTask* first = scheduler.next();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->end.load(), 8 * kMiB);
  RangeTask* helper = scheduler.next();  // nothing queued any more: the tail is split
  ASSERT_NE(helper, nullptr);
  EXPECT_EQ(helper->begin, 4 * kMiB);
  EXPECT_EQ(helper->end.load(), 8 * kMiB);
  EXPECT_EQ(first->end.load(), 4 * kMiB) << "the first connection stops where the second begins";
  f.fetch(*helper);
  scheduler.done(helper, std::nullopt);
  f.fetch(*first);
  scheduler.done(first, std::nullopt);
  EXPECT_EQ(scheduler.next(), nullptr);
  EXPECT_EQ(f.blob(file), f.contents[file.path]);
}

TEST(ChunkScheduler, ARangeTakesTheQueuedBytesAfterItButNotAnotherConnections) {
  Fixture f;
  const RemoteFile file = f.add_file("big.safetensors", 4 * kMiB);
  std::vector<ScheduledFile> jobs;
  jobs.push_back(f.job(file));
  ChunkScheduler scheduler(std::move(jobs), {8, kMiB, 8 * kMiB}, f.publish(), {});
  RangeTask* first = scheduler.next();
  ASSERT_NE(first, nullptr);
  ASSERT_EQ(first->extension, &scheduler);
  // The Xet source's case: the range's last chunk ends 1000 bytes past it.
  EXPECT_TRUE(first->extension->extend(*first, kMiB + 1000));
  EXPECT_EQ(first->end.load(), kMiB + 1000);
  RangeTask* second = scheduler.next();
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->begin, kMiB + 1000) << "the next range starts where the grown one ends";
  EXPECT_EQ(second->end.load(), 2 * kMiB + 1000);
  // Bytes another connection has are not taken.
  EXPECT_FALSE(first->extension->extend(*first, kMiB + 2000));
  EXPECT_EQ(first->end.load(), kMiB + 1000);
  EXPECT_EQ(second->begin, kMiB + 1000);
  for (RangeTask* task : {first, second}) {
    f.fetch(*task);
    scheduler.done(task, std::nullopt);
  }
  while (RangeTask* task = scheduler.next()) {
    f.fetch(*task);
    scheduler.done(task, std::nullopt);
  }
  EXPECT_EQ(f.blob(file), f.contents[file.path]);
}

TEST(ChunkScheduler, QueuedFromNamesTheRangesConnectionsWillBeHandedNext) {
  Fixture f;
  const RemoteFile file = f.add_file("big.safetensors", 3 * kMiB + 500);
  std::vector<ScheduledFile> jobs;
  jobs.push_back(f.job(file));
  ChunkScheduler scheduler(std::move(jobs), {8, kMiB, 8 * kMiB}, f.publish(), {});
  RangeTask* first = scheduler.next();
  ASSERT_NE(first, nullptr);
  // Each prediction is what the next connection is then handed, cut as the scheduler cuts.
  const store::ByteRange second = first->extension->queued_from(*first, first->end);
  EXPECT_EQ(second.begin, kMiB);
  EXPECT_EQ(second.end, 2 * kMiB);
  const store::ByteRange third = first->extension->queued_from(*first, second.end);
  EXPECT_EQ(third.begin, 2 * kMiB);
  EXPECT_EQ(third.end, 3 * kMiB);
  const store::ByteRange last = first->extension->queued_from(*first, third.end);
  EXPECT_EQ(last.begin, 3 * kMiB);
  EXPECT_EQ(last.end, 3 * kMiB + 500);
  EXPECT_EQ(first->extension->queued_from(*first, last.end).end, 0U) << "nothing is queued past the file's end";
  for (const store::ByteRange& predicted : {second, third, last}) {
    RangeTask* task = scheduler.next();
    ASSERT_NE(task, nullptr);
    EXPECT_EQ(task->begin, predicted.begin);
    EXPECT_EQ(task->end.load(), predicted.end);
  }
  // Once taken, bytes are no longer queued: a prediction from the first range's end skips to nothing.
  EXPECT_EQ(first->extension->queued_from(*first, first->end).end, 0U);
}

TEST(ChunkScheduler, TakersPerFileCountsRangesInFlightForEachPlaceWithWork) {
  Fixture f;
  std::vector<ScheduledFile> jobs;
  for (std::size_t i = 0; i < 4; ++i) {  // sizes differ so that contents (and their blob locks) do too
    jobs.push_back(f.job(f.add_file("f" + std::to_string(i) + ".bin", 10 * kMiB + i)));
  }
  ChunkScheduler scheduler(std::move(jobs), {2, kMiB, 8 * kMiB}, f.publish(), {});
  RangeTask* first = scheduler.next(0);
  ASSERT_NE(first, nullptr);
  // One range in flight; its file has bytes queued, and one more file may open: one taker per place.
  EXPECT_EQ(first->extension->takers_per_file(), 1U);
  std::vector<RangeTask*> more;
  for (std::size_t i = 1; i < 6; ++i) more.push_back(scheduler.next(i));
  // Six ranges over the two files open at once (--max-workers 2), no room to open more: three per file,
  // so a file's next ranges are taken three at a time.
  EXPECT_EQ(first->extension->takers_per_file(), 3U);
}

TEST(ChunkScheduler, ARangeGivesBackItsTailToTheNextRangeOnlyWhileNoConnectionHasIt) {
  Fixture f;
  const RemoteFile file = f.add_file("big.safetensors", 3 * kMiB - 1000);
  std::vector<ScheduledFile> jobs;
  jobs.push_back(f.job(file));
  ChunkScheduler scheduler(std::move(jobs), {8, kMiB, 8 * kMiB}, f.publish(), {});
  RangeTask* first = scheduler.next();
  ASSERT_NE(first, nullptr);
  // The Xet source's case: the range would cross into another xorb 1000 bytes before its end.
  EXPECT_TRUE(first->extension->give_back(*first, kMiB - 1000));
  EXPECT_EQ(first->end.load(), kMiB - 1000);
  EXPECT_EQ(first->extension->queued_from(*first, first->end).begin, kMiB - 1000);
  RangeTask* second = scheduler.next();
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->begin, kMiB - 1000) << "the next range starts where the shortened one ends";
  EXPECT_EQ(second->end.load(), 2 * kMiB - 1000) << "and is a whole chunk: the bytes joined it";
  // Bytes another connection waits for are not handed back: the second range would leave a hole.
  EXPECT_FALSE(first->extension->give_back(*first, kMiB - 2000));
  EXPECT_EQ(first->end.load(), kMiB - 1000);
  RangeTask* third = scheduler.next();
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(third->end.load(), file.size);
  EXPECT_FALSE(third->extension->give_back(*third, third->begin + 1000)) << "nothing follows the file's last range";
  EXPECT_FALSE(third->extension->give_back(*third, third->begin)) << "a range keeps at least a byte";
  for (RangeTask* task : {first, second, third}) {
    f.fetch(*task);
    scheduler.done(task, std::nullopt);
  }
  EXPECT_EQ(scheduler.next(), nullptr);
  EXPECT_EQ(f.blob(file), f.contents[file.path]);
}

TEST(ChunkScheduler, NamesTheFirstRangesOfTheNextFilesToOpenUntilEveryFileIsOpen) {
  Fixture f;
  const RemoteFile a = f.add_file("a.safetensors", 3 * kMiB);
  const RemoteFile empty = f.add_file("empty.txt", 0);
  const RemoteFile b = f.add_file("bb.safetensors", kMiB / 2);
  ChunkScheduler scheduler(f.jobs({a, empty, b}), {1, kMiB, kMiB}, f.publish(), {});  // one file open at a time
  std::vector<UpcomingRanges> upcoming = scheduler.next_files_start(1, 2);
  ASSERT_EQ(upcoming.size(), 1U) << "as many files as asked for";
  EXPECT_EQ(upcoming[0].file->path, a.path);
  ASSERT_EQ(upcoming[0].ranges.size(), 2U) << "as many ranges as asked for";
  EXPECT_EQ(upcoming[0].ranges[0].begin, 0U);
  EXPECT_EQ(upcoming[0].ranges[0].end, kMiB);
  EXPECT_EQ(upcoming[0].ranges[1].begin, kMiB) << "cut one after the other, as the scheduler hands them out";
  EXPECT_EQ(upcoming[0].ranges[1].end, 2 * kMiB);
  upcoming = scheduler.next_files_start(4, 1);
  ASSERT_EQ(upcoming.size(), 2U) << "the empty file has no range to plan; there are no more files";
  EXPECT_EQ(upcoming[0].file->path, a.path);
  EXPECT_EQ(upcoming[1].file->path, b.path) << "in the order they open";
  RangeTask* first = scheduler.next();
  ASSERT_NE(first, nullptr);
  upcoming = scheduler.next_files_start(4, 4);
  ASSERT_EQ(upcoming.size(), 1U);
  EXPECT_EQ(upcoming[0].file->path, b.path) << "while a is open, b is the next to open";
  ASSERT_EQ(upcoming[0].ranges.size(), 1U) << "a file smaller than a chunk is one range";
  EXPECT_EQ(upcoming[0].ranges[0].end, kMiB / 2);
  std::vector<RangeTask*> handed{first};
  while (!handed.empty()) {
    RangeTask* task = handed.back();
    handed.pop_back();
    f.fetch(*task);
    scheduler.done(task, std::nullopt);
    if (RangeTask* next = scheduler.next()) handed.push_back(next);
  }
  EXPECT_TRUE(scheduler.next_files_start(4, 1).empty()) << "every file was opened";
  EXPECT_EQ(f.blob(b), f.contents[b.path]);
}

TEST(ChunkScheduler, CutsTheDownloadsLastBytesIntoChunksHalfAsLarge) {
  Fixture f;
  const RemoteFile a = f.add_file("a.safetensors", 4 * kMiB);
  const RemoteFile b = f.add_file("b.safetensors", 3 * kMiB);
  // The tail is the last 4 MiB: all of b, and a's last MiB. One file open at a time.
  ChunkScheduler scheduler(f.jobs({a, b}), {1, kMiB, kMiB / 4, 4 * kMiB}, f.publish(), {});
  const std::vector<UpcomingRanges> upcoming = scheduler.next_files_start(2, 8);
  ASSERT_EQ(upcoming.size(), 2U);
  ASSERT_EQ(upcoming[0].ranges.size(), 5U) << "a: three whole chunks, then two halves";
  EXPECT_EQ(upcoming[0].ranges[2].end, 3 * kMiB);
  EXPECT_EQ(upcoming[0].ranges[3].end, 3 * kMiB + kMiB / 2);
  ASSERT_EQ(upcoming[1].ranges.size(), 6U) << "b: halves only";
  std::vector<std::pair<std::string, store::ByteRange>> taken;
  while (RangeTask* task = scheduler.next()) {
    taken.emplace_back(task->file->remote().path, store::ByteRange{task->begin, task->end});
    f.fetch(*task);
    scheduler.done(task, std::nullopt);
  }
  ASSERT_EQ(taken.size(), 11U) << "the ranges handed out are the ones named ahead";
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(taken[i].first, a.path);
    EXPECT_EQ(taken[i].second.begin, upcoming[0].ranges[i].begin);
    EXPECT_EQ(taken[i].second.end, upcoming[0].ranges[i].end);
  }
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(taken[5 + i].first, b.path);
    EXPECT_EQ(taken[5 + i].second.end, upcoming[1].ranges[i].end);
  }
  EXPECT_EQ(f.blob(a), f.contents[a.path]);
  EXPECT_EQ(f.blob(b), f.contents[b.path]);
}

TEST(ChunkScheduler, SplitsARangeWhereItsRequestInFlightEndsRatherThanCutIt) {
  Fixture f;
  const RemoteFile big = f.add_file("big.safetensors", 16 * kMiB);
  const RemoteFile other = f.add_file("other.safetensors", 20 * kMiB);
  std::vector<ScheduledFile> jobs;
  jobs.push_back(f.job(big));
  jobs.push_back(f.job(other));
  ChunkScheduler scheduler(std::move(jobs), {8, 64 * kMiB, kMiB}, f.publish(), {});
  RangeTask* xet = scheduler.next();
  RangeTask* bridge = scheduler.next();
  ASSERT_NE(xet, nullptr);
  ASSERT_NE(bridge, nullptr);
  ASSERT_EQ(xet->file->remote().path, big.path);
  // The Xet range has asked for its first 10 MiB; the bridge range (larger) for all of it.
  xet->requested_until = 10 * kMiB;
  RangeTask* helper = scheduler.next();
  ASSERT_NE(helper, nullptr);
  EXPECT_EQ(helper->file->remote().path, big.path) << "the range a split does not cut short";
  EXPECT_EQ(helper->begin, 10 * kMiB) << "cut where its request in flight ends, not in the middle (8 MiB)";
  EXPECT_EQ(xet->end.load(), 10 * kMiB);
  // Nothing left unasked there: the next split halves the largest range, as before.
  RangeTask* second_helper = scheduler.next();
  ASSERT_NE(second_helper, nullptr);
  EXPECT_EQ(second_helper->file->remote().path, other.path);
  EXPECT_EQ(second_helper->begin, 10 * kMiB);
  for (RangeTask* task : {xet, bridge, helper, second_helper}) {
    f.fetch(*task);
    scheduler.done(task, std::nullopt);
  }
  EXPECT_EQ(scheduler.next(), nullptr);
  EXPECT_EQ(f.blob(big), f.contents[big.path]);
  EXPECT_EQ(f.blob(other), f.contents[other.path]);
}

TEST(ChunkScheduler, CutsARequestInFlightThatIsSlowToComeButNotOneThatIsFast) {
  Fixture f;
  const RemoteFile xet_file = f.add_file("xet.safetensors", 8 * kMiB);
  const RemoteFile bridge_file = f.add_file("bridge.safetensors", 6 * kMiB + kMiB / 2);
  std::vector<ScheduledFile> jobs;
  jobs.push_back(f.job(xet_file));
  jobs.push_back(f.job(bridge_file));
  // Splits leave 3 MiB at least; a request in flight is long from 12 MiB to come.
  ChunkScheduler scheduler(std::move(jobs), {8, 64 * kMiB, 3 * kMiB}, f.publish(), {});
  RangeTask* xet = scheduler.next();
  RangeTask* bridge = scheduler.next();
  ASSERT_NE(xet, nullptr);
  ASSERT_NE(bridge, nullptr);
  ASSERT_EQ(xet->file->remote().path, xet_file.path);
  // The Xet range has asked for all of its bytes in one request and has 1 MiB of them: 7 MiB to come, more
  // than the bridge range's 6.5, but arriving fast (just started), so it is not cut: the bridge range is.
  xet->requested_until = 8 * kMiB;
  xet->position = kMiB;
  xet->started = std::chrono::steady_clock::now();
  RangeTask* helper = scheduler.next();
  ASSERT_NE(helper, nullptr);
  EXPECT_EQ(helper->file->remote().path, bridge_file.path);
  // The same range, 1 MiB in 10 s (a capped or stalling connection): the rest would take a minute, so it is
  // cut in the middle of what it has to come, its request in flight notwithstanding.
  xet->started = std::chrono::steady_clock::now() - std::chrono::seconds(10);
  RangeTask* slow_helper = scheduler.next();
  ASSERT_NE(slow_helper, nullptr);
  EXPECT_EQ(slow_helper->file->remote().path, xet_file.path);
  EXPECT_EQ(slow_helper->begin, 8 * kMiB - 7 * kMiB / 2);
  EXPECT_EQ(xet->end.load(), slow_helper->begin);
  xet->position = 0;  // the fetch below writes its first MiB too
  for (RangeTask* task : {xet, bridge, helper, slow_helper}) {
    f.fetch(*task);
    scheduler.done(task, std::nullopt);
  }
  EXPECT_EQ(scheduler.next(), nullptr);
  EXPECT_EQ(f.blob(xet_file), f.contents[xet_file.path]);
  EXPECT_EQ(f.blob(bridge_file), f.contents[bridge_file.path]);
}

TEST(ChunkScheduler, ARefusedConnectionLowersTheFilesConnectionBudget) {
  Fixture f;
  const RemoteFile file = f.add_file("big.safetensors", 4 * kMiB);
  std::vector<ScheduledFile> jobs;
  jobs.push_back(f.job(file));
  ChunkScheduler scheduler(std::move(jobs), {8, kMiB, kMiB}, f.publish(), {});
  RangeTask* first = scheduler.next();
  RangeTask* second = scheduler.next();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  // The CDN refused the second connection: the source reports it to the file's budget, and the connection
  // gives its range back untouched.
  second->budget->note_refusal();
  scheduler.done(second, std::nullopt);
  // Two were serving when it refused: one may now. A third connection waits until the first is done.
  std::atomic<bool> first_done{false};
  std::future<RangeTask*> third = std::async(std::launch::async, [&] { return scheduler.next(1); });
  EXPECT_EQ(third.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout)
      << "a connection beyond the budget was handed a range";
  f.fetch(*first);
  first_done = true;
  scheduler.done(first, std::nullopt);
  ASSERT_EQ(third.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  RangeTask* task = third.get();
  ASSERT_NE(task, nullptr);
  EXPECT_TRUE(first_done.load());
  EXPECT_EQ(task->budget->limit(), 1);
  for (int tasks = 0; task != nullptr && tasks < 100; ++tasks) {
    f.fetch(*task);
    scheduler.done(task, std::nullopt);
    task = scheduler.next();
  }
  EXPECT_EQ(f.blob(file), f.contents[file.path]);
}

TEST(ChunkScheduler, AFailedRangeFailsItsFileAndCancelsItsOtherRanges) {
  Fixture f;
  const RemoteFile file = f.add_file("big.safetensors", 4 * kMiB);
  std::vector<ScheduledFile> jobs;
  jobs.push_back(f.job(file));
  ChunkScheduler scheduler(std::move(jobs), {8, 2 * kMiB, kMiB}, f.publish(), {});
  RangeTask* a = scheduler.next();
  RangeTask* b = scheduler.next();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  scheduler.done(a, Error(ErrorCode::kNetwork, "big.safetensors: HTTP 500", file.path));
  EXPECT_TRUE(b->cancelled.load());
  scheduler.done(b, std::nullopt);
  EXPECT_EQ(scheduler.next(), nullptr);
  ASSERT_TRUE(scheduler.errors()[0].has_value());
  EXPECT_EQ(scheduler.errors()[0]->code(), ErrorCode::kNetwork);
  EXPECT_EQ(scheduler.files_fetched(), 0U);
}

TEST(ChunkScheduler, AnEmptyFileStillGetsOneRequest) {
  Fixture f;
  const RemoteFile file = f.add_file("empty.txt", 0);
  std::vector<ScheduledFile> jobs;
  jobs.push_back(f.job(file));
  ChunkScheduler scheduler(std::move(jobs), {8, kMiB, kMiB}, f.publish(), {});
  RangeTask* task = scheduler.next();
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(task->begin, 0U);
  EXPECT_EQ(task->end.load(), 0U);
  scheduler.done(task, std::nullopt);
  EXPECT_EQ(scheduler.next(), nullptr);
  EXPECT_EQ(scheduler.files_fetched(), 1U);
}

TEST(ChunkScheduler, ResumesOnlyWhatAnEarlierRunDidNotRecord) {
  Fixture f;
  const RemoteFile file = f.add_file("big.safetensors", 4 * kMiB);
  {
    std::vector<ScheduledFile> jobs;
    jobs.push_back(f.job(file));
    ChunkScheduler first_run(std::move(jobs), {8, kMiB, kMiB}, f.publish(), {});
    RangeTask* task = first_run.next();
    f.fetch(*task);
    first_run.done(task, std::nullopt);
    // The run ends here (as after kill -9): three chunks never arrived.
    RangeTask* unfinished = first_run.next();
    first_run.done(unfinished, Error(ErrorCode::kInterrupted, "interrupted"));
  }
  f.orphan_partials(file);
  f.start_new_run();
  std::vector<ScheduledFile> jobs;
  jobs.push_back(f.job(file));
  ChunkScheduler second_run(std::move(jobs), {8, kMiB, kMiB}, f.publish(), {});
  std::uint64_t fetched = 0;
  while (RangeTask* task = second_run.next()) {
    fetched += task->end - task->begin;
    f.fetch(*task);
    second_run.done(task, std::nullopt);
  }
  EXPECT_EQ(fetched, 3 * kMiB);
  EXPECT_EQ(f.blob(file), f.contents[file.path]);
}

// Each download of the file flips the byte at flipped[pass] (no flip past the list): every task of a pass
// goes through here, and a new pass starts once the file was queued again from byte 0.
std::optional<Error> download_with_flips(Fixture& f, const RemoteFile& file, const std::vector<std::uint64_t>& flipped,
                                         int max_passes, int& passes) {
  std::vector<ScheduledFile> jobs;
  jobs.push_back(f.job(file, IncomingFileSettings{false, max_passes, std::chrono::milliseconds(0)}));
  ChunkScheduler scheduler(std::move(jobs), {8, kMiB, kMiB}, f.publish(), {});
  passes = 0;
  for (int tasks = 0; tasks < 1000; ++tasks) {  // bounded: a bug that loops fails the test instead of hanging it
    RangeTask* task = scheduler.next();
    if (task == nullptr) break;
    if (task->begin == 0) ++passes;
    const auto pass = static_cast<std::size_t>(passes - 1);
    if (pass < flipped.size()) {
      f.fetch_flipped(*task, flipped[pass]);
    } else {
      f.fetch(*task);
    }
    scheduler.done(task, std::nullopt);
  }
  return scheduler.errors()[0];
}

TEST(IncomingFileHashCheck, CorruptionThatDiffersEachTimeIsRetriedUntilTheBytesMatch) {
  Fixture f;
  const RemoteFile file = f.add_file("big.safetensors", 3 * kMiB);
  int passes = 0;
  // Three corrupt downloads in a row, each flipped at another byte: transport corruption, not the server.
  const std::optional<Error> error = download_with_flips(f, file, {10, 2 * kMiB + 7, 5}, 4, passes);
  EXPECT_FALSE(error.has_value()) << error->what();
  EXPECT_EQ(passes, 4);
  EXPECT_EQ(f.blob(file), f.contents[file.path]);
}

TEST(IncomingFileHashCheck, TheSameWrongHashTwiceFailsAtOnceNamingBothHashes) {
  Fixture f;
  const RemoteFile file = f.add_file("big.safetensors", 2 * kMiB);
  std::string corrupted = f.contents[file.path];
  corrupted[12345] = static_cast<char>(~corrupted[12345]);
  crypto::Digest sha = crypto::Digest::sha256();
  sha.update(std::as_bytes(std::span(corrupted.data(), corrupted.size())));
  const std::string wrong = sha.finish_hex();
  int passes = 0;
  const std::optional<Error> error = download_with_flips(f, file, {12345, 12345, 12345, 12345}, 8, passes);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code(), ErrorCode::kVerificationFailed);
  EXPECT_EQ(passes, 2) << "the second identical hash ends it, with retries left";
  const std::string what = error->what();
  EXPECT_NE(what.find(*file.lfs_sha256), std::string::npos) << what;
  EXPECT_NE(what.find(wrong), std::string::npos) << what;
  EXPECT_NE(what.find("twice"), std::string::npos) << what;
  EXPECT_TRUE(f.blob(file).empty()) << "nothing published";
}

TEST(IncomingFileHashCheck, ASmallFileNeedsTheSameWrongHashThreeTimes) {
  Fixture f;
  // 250 bytes: a byte flipped in transit lands where it landed before once in a few hundred pairs.
  const RemoteFile file = f.add_file("config.json", 250);
  int passes = 0;
  const std::optional<Error> twice_then_good = download_with_flips(f, file, {17, 17}, 8, passes);
  EXPECT_FALSE(twice_then_good.has_value()) << twice_then_good->what();
  EXPECT_EQ(passes, 3);
  EXPECT_EQ(f.blob(file), f.contents[file.path]);

  Fixture g;
  const RemoteFile same = g.add_file("config.json", 250);
  const std::optional<Error> three_times = download_with_flips(g, same, {17, 17, 17, 17}, 8, passes);
  ASSERT_TRUE(three_times.has_value());
  EXPECT_EQ(three_times->code(), ErrorCode::kVerificationFailed);
  EXPECT_EQ(passes, 3) << "the third identical hash ends it, with retries left";
  EXPECT_NE(std::string(three_times->what()).find("three times"), std::string::npos) << three_times->what();
}

TEST(IncomingFileHashCheck, CorruptionEveryTimeEndsAfterTheLastPass) {
  Fixture f;
  const RemoteFile file = f.add_file("big.safetensors", 2 * kMiB);
  int passes = 0;
  const std::optional<Error> error = download_with_flips(f, file, {1, 2, 3, 4, 5, 6}, 3, passes);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code(), ErrorCode::kVerificationFailed);
  EXPECT_EQ(passes, 3);
  EXPECT_NE(std::string(error->what()).find("downloaded 3 times"), std::string::npos) << error->what();
  EXPECT_TRUE(f.blob(file).empty());
}

TEST(IncomingFileReplace, ReplacesACompleteCopyOnDiskWithFreshlyFetchedBytes) {
  Fixture f;
  const RemoteFile file = f.add_file("big.safetensors", 2 * kMiB);
  const std::filesystem::path blob = f.dir.path() / "models--org--name" / "blobs" / file.etag();
  std::string rotted = f.contents[file.path];
  rotted[99] = static_cast<char>(~rotted[99]);
  std::ofstream(blob, std::ios::binary) << rotted;
  {
    std::vector<ScheduledFile> jobs;
    jobs.push_back(f.job(file));
    ChunkScheduler scheduler(std::move(jobs), {8, kMiB, kMiB}, f.publish(), {});
    EXPECT_EQ(scheduler.next(), nullptr) << "a complete copy costs no request";
  }
  std::vector<ScheduledFile> jobs;
  jobs.push_back(f.job(file, IncomingFileSettings{true, 3, std::chrono::milliseconds(0)}));
  ChunkScheduler scheduler(std::move(jobs), {8, kMiB, kMiB}, f.publish(), {});
  for (int tasks = 0; tasks < 100; ++tasks) {
    RangeTask* task = scheduler.next();
    if (task == nullptr) break;
    f.fetch(*task);
    scheduler.done(task, std::nullopt);
  }
  EXPECT_FALSE(scheduler.errors()[0].has_value());
  EXPECT_EQ(f.blob(file), f.contents[file.path]);
}

}  // namespace
}  // namespace hfget::transfer
