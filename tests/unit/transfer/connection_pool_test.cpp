// SPDX-License-Identifier: MIT
// The number of connections changed while a download runs: lowered, the extra connections finish the range
// they hold and take no more; raised, parked ones take work again and threads are started for new numbers.
// Every wait is bounded: a bug fails the test instead of hanging it.
#include "transfer/connection_pool.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "crypto/digest.hpp"
#include "store/layout.hpp"
#include "support/temp_dir.hpp"
#include "transfer/chunk_scheduler.hpp"
#include "transfer/publish.hpp"

namespace hfget::transfer {
namespace {

using test_support::TempDir;
const std::string kCommit(40, 'c');
constexpr std::size_t kFiles = 24;
constexpr auto kPatience = std::chrono::seconds(60);  // a bound for a broken build, not a timing expectation

enum class Phase { kFour, kLowered, kRaised };

struct Served {
  std::size_t connection;
  Phase phase;
};

// The test's side of the connections: which connection took each task, in which phase, and two gates that
// hold connections with a task in hand until the test has changed the count.
struct Board {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<Served> served;
  Phase phase = Phase::kFour;
  bool first_gate_open = false;   // the first four tasks are held until the count is lowered
  bool second_gate_open = false;  // connection 0's sixth task is held until another took work after the raise
  std::size_t served_by_zero = 0;

  template <typename Predicate>
  bool wait_for(std::unique_lock<std::mutex>& lock, Predicate predicate) {
    return changed.wait_for(lock, kPatience, predicate);
  }
  std::size_t served_after_raise_by_others() const {
    std::size_t count = 0;
    for (const Served& s : served) count += s.phase == Phase::kRaised && s.connection != 0 ? 1 : 0;
    return count;
  }
};

struct ConnectionPoolTest : ::testing::Test {
  TempDir dir;
  RepoId repo{RepoType::kModel, "org/name"};
  std::unique_ptr<store::Layout> layout = store::make_cache_layout(dir.path(), repo, kCommit);
  ProgressSink progress;
  std::vector<std::string> contents;
  Board board;

  void SetUp() override { layout->prepare(Snapshot{kCommit, {}}, {}, "main"); }

  ScheduledFile add_file(std::size_t index) {
    std::string content(1000 + index, '\0');
    for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>((i * 131 + index) & 0xFF);
    crypto::Digest sha = crypto::Digest::sha256();
    sha.update(std::as_bytes(std::span(content.data(), content.size())));
    RemoteFile file;
    file.path = "file" + std::to_string(index) + ".bin";
    file.size = content.size();
    file.blob_id = std::string(40, '0');
    file.lfs_sha256 = sha.finish_hex();
    file.lfs_size = content.size();
    contents.push_back(content);
    return {std::make_unique<IncomingFile>(file, *layout, progress), nullptr};
  }

  // Stands in for a source's connection: the right bytes for the task (the file's index is in its name).
  void fetch(RangeTask& task) {
    const std::string& path = task.file->remote().path;
    const std::string& content = contents.at(std::stoul(path.substr(4)));
    task.file->store(task.begin, std::as_bytes(std::span(content.data() + task.begin, task.end - task.begin)));
    task.position = task.end.load();
  }

  void hold_if_gated(std::size_t connection) {
    std::unique_lock lock(board.mutex);
    board.served.push_back({connection, board.phase});
    if (connection == 0) ++board.served_by_zero;
    board.changed.notify_all();
    if (board.phase == Phase::kFour) {
      EXPECT_TRUE(board.wait_for(lock, [&] { return board.first_gate_open; }));
    } else if (connection == 0 && board.served_by_zero == 6) {
      EXPECT_TRUE(board.wait_for(lock, [&] { return board.second_gate_open; }));
    }
  }

  void open_gates() {
    const std::lock_guard lock(board.mutex);
    board.first_gate_open = true;
    board.second_gate_open = true;
    board.changed.notify_all();
  }
};

TEST_F(ConnectionPoolTest, LoweredAndRaisedWhileTheDownloadRuns) {
  std::vector<ScheduledFile> files;
  for (std::size_t i = 0; i < kFiles; ++i) files.push_back(add_file(i));
  ChunkScheduler scheduler(std::move(files), {kFiles, 1 << 20, 1 << 20}, publish_into(*layout), {});
  ConnectionPool pool(scheduler, [&](std::size_t connection) {
    while (RangeTask* task = scheduler.next(connection)) {
      hold_if_gated(connection);
      fetch(*task);
      scheduler.done(task, std::nullopt);
    }
  });

  pool.set_connections(4);
  {
    std::unique_lock lock(board.mutex);
    // Each of the four holds a task of its own at the first gate.
    ASSERT_TRUE(board.wait_for(lock, [&] { return board.served.size() == 4; })) << "four connections took work";
    board.phase = Phase::kLowered;
  }
  pool.set_connections(1);
  EXPECT_EQ(pool.connections(), 1U);
  {
    std::unique_lock lock(board.mutex);
    board.first_gate_open = true;
    board.changed.notify_all();
    // Connection 0 alone goes on, and is held at its sixth task.
    ASSERT_TRUE(board.wait_for(lock, [&] { return board.served_by_zero == 6; }));
    board.phase = Phase::kRaised;
  }
  pool.set_connections(6);
  EXPECT_EQ(pool.threads_started(), 6U) << "two threads started for the numbers never run";
  {
    std::unique_lock lock(board.mutex);
    EXPECT_TRUE(board.wait_for(lock, [&] { return board.served_after_raise_by_others() > 0; }))
        << "the raised count wakes the parked connections and the new ones";
  }
  open_gates();
  pool.join();

  for (const Served& served : board.served) {
    if (served.phase == Phase::kLowered) {
      EXPECT_EQ(served.connection, 0U) << "a parked connection took work";
    }
  }
  EXPECT_EQ(board.served.size(), kFiles);
  EXPECT_EQ(scheduler.files_fetched(), kFiles);
}

TEST_F(ConnectionPoolTest, ParkedConnectionsEndWithTheDownload) {
  std::vector<ScheduledFile> files;
  for (std::size_t i = 0; i < 3; ++i) files.push_back(add_file(i));
  ChunkScheduler scheduler(std::move(files), {3, 1 << 20, 1 << 20}, publish_into(*layout), {});
  open_gates();
  board.phase = Phase::kLowered;  // no gate
  ConnectionPool pool(scheduler, [&](std::size_t connection) {
    while (RangeTask* task = scheduler.next(connection)) {
      hold_if_gated(connection);
      fetch(*task);
      scheduler.done(task, std::nullopt);
    }
  });
  pool.set_connections(4);
  pool.set_connections(1);  // whichever of 1 to 3 has no task now parks
  pool.join();              // returns: the parked ones saw the download end

  EXPECT_EQ(scheduler.files_fetched(), 3U);
}

}  // namespace
}  // namespace hfget::transfer
