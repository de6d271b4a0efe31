// SPDX-License-Identifier: MIT
// The sampler between the scheduler and the controller, on real connection threads: every range takes a few
// milliseconds whatever its size, as behind a per-connection cap, so more connections move more and the count
// must climb past the start; every change reaches the pool and the progress sink, and the sampler stops with
// the download. The window is shortened so that the test takes well under a second.
#include "transfer/connection_steering.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "crypto/digest.hpp"
#include "store/layout.hpp"
#include "support/temp_dir.hpp"
#include "transfer/publish.hpp"

namespace hfget::transfer {
namespace {

using test_support::TempDir;
const std::string kCommit(40, 'c');
constexpr std::size_t kFiles = 32;
constexpr std::size_t kFileBytes = 64 * 1024;
constexpr std::uint64_t kChunkBytes = 4 * 1024;  // 16 ranges a file, 512 in all

class RecordingSink final : public ProgressSink {
 public:
  void on_connections(std::size_t count, std::string_view reason) override {
    const std::lock_guard lock(mutex_);
    changes_.emplace_back(count, std::string(reason));
  }
  std::vector<std::pair<std::size_t, std::string>> changes() const {
    const std::lock_guard lock(mutex_);
    return changes_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<std::size_t, std::string>> changes_;
};

struct ConnectionSteeringTest : ::testing::Test {
  TempDir dir;
  RepoId repo{RepoType::kModel, "org/name"};
  std::unique_ptr<store::Layout> layout = store::make_cache_layout(dir.path(), repo, kCommit);
  ProgressSink quiet;                 // the files' own progress
  std::vector<std::string> contents;  // each file's own: files of one content would share one cache blob

  void SetUp() override { layout->prepare(Snapshot{kCommit, {}}, {}, "main"); }

  std::vector<ScheduledFile> files() {
    std::vector<ScheduledFile> result;
    for (std::size_t i = 0; i < kFiles; ++i) {
      std::string& content = contents.emplace_back(kFileBytes, static_cast<char>('a' + i));
      crypto::Digest sha = crypto::Digest::sha256();
      sha.update(std::as_bytes(std::span(content.data(), content.size())));
      RemoteFile file;
      file.path = "file" + std::to_string(i) + ".bin";
      file.size = kFileBytes;
      file.blob_id = std::string(40, '0');
      file.lfs_sha256 = sha.finish_hex();
      file.lfs_size = kFileBytes;
      result.push_back({std::make_unique<IncomingFile>(file, *layout, quiet), nullptr});
    }
    return result;
  }
};

TEST_F(ConnectionSteeringTest, ClimbsPastTheStartWhenEachConnectionIsCappedAndStopsWithTheDownload) {
  ChunkScheduler scheduler(files(), {kFiles, kChunkBytes, kChunkBytes}, publish_into(*layout), {});
  ConnectionPool pool(scheduler, [&](std::size_t connection) {
    while (RangeTask* task = scheduler.next(connection)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // the per-connection cap
      const std::string& content = contents.at(std::stoul(task->file->remote().path.substr(4)));
      task->file->store(task->begin, std::as_bytes(std::span(content.data() + task->begin, task->end - task->begin)));
      task->position = task->end.load();
      scheduler.done(task, std::nullopt);
    }
  });
  RecordingSink sink;
  SteeringSettings settings;
  settings.window = std::chrono::milliseconds(50);  // long enough for a loaded (TSan, 2-core) runner to start 16
  {
    const ConnectionSteering steering(pool, scheduler, sink, settings);
    EXPECT_EQ(pool.connections(), 16U);
    pool.join();
  }
  EXPECT_EQ(scheduler.files_fetched(), kFiles);
  const std::vector<std::pair<std::size_t, std::string>> changes = sink.changes();
  ASSERT_FALSE(changes.empty());
  EXPECT_EQ(changes.front(), std::make_pair(std::size_t{16}, std::string("starting at 16, adapting up to 64")));
  const auto most = std::max_element(changes.begin(), changes.end());
  EXPECT_GE(most->first, 32U) << "no doubling was kept: " << changes.size() << " change(s)";
  EXPECT_EQ(pool.connections(), changes.back().first);  // every change reached the pool
}

TEST_F(ConnectionSteeringTest, StopsAtOnceWhenDestroyedBeforeAnyWindowEnds) {
  ChunkScheduler scheduler({}, {}, publish_into(*layout), {});
  ConnectionPool pool(scheduler, [&](std::size_t connection) {
    while (RangeTask* task = scheduler.next(connection)) scheduler.done(task, std::nullopt);
  });
  RecordingSink sink;
  SteeringSettings settings;
  settings.window = std::chrono::hours(1);
  const auto started = std::chrono::steady_clock::now();
  { const ConnectionSteering steering(pool, scheduler, sink, settings); }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  EXPECT_EQ(sink.changes().size(), 1U);
}

}  // namespace
}  // namespace hfget::transfer
