// SPDX-License-Identifier: MIT
#include "util/reserved_record_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/temp_dir.hpp"

namespace hfget::util {
namespace {

using test_support::TempDir;

constexpr std::size_t kCapacity = 4096;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

std::string without_padding(const std::string& text) {
  return text.substr(0, text.find_last_not_of(" \n") + 1);
}

struct stat stat_of(const std::filesystem::path& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info;
}

std::set<std::string> names_in(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

TEST(ReservedRecordFile, FirstWriteCreatesTheRecordAndASpareWithItsBlocksAllocated) {
  const TempDir dir;
  ReservedRecordFile record(dir / "state.json", kCapacity);
  record.write(R"({"state": "running"})");
  EXPECT_EQ(without_padding(read_file(dir / "state.json")), R"({"state": "running"})");
  EXPECT_EQ(names_in(dir.path()), (std::set<std::string>{"state.json", "state.json.lock", "state.json.spare"}));
  for (const char* name : {"state.json", "state.json.spare"}) {
    const struct stat info = stat_of(dir / name);
    EXPECT_EQ(static_cast<std::size_t>(info.st_size), kCapacity) << name;
    EXPECT_GE(static_cast<std::size_t>(info.st_blocks) * 512, kCapacity) << name << ": the space is not reserved";
  }
}

TEST(ReservedRecordFile, RewritesTradeNamesBetweenTheSameTwoFilesSoNothingIsAllocated) {
  const TempDir dir;
  ReservedRecordFile record(dir / "state.json", kCapacity);
  record.write(R"({"n": 0})");
  const std::set<ino_t> inodes = {stat_of(dir / "state.json").st_ino, stat_of(dir / "state.json.spare").st_ino};
  for (int n = 1; n <= 5; ++n) {
    const std::string content = "{\"n\": " + std::to_string(n) + "}";
    record.write(content);
    EXPECT_EQ(without_padding(read_file(dir / "state.json")), content);
    EXPECT_EQ((std::set<ino_t>{stat_of(dir / "state.json").st_ino, stat_of(dir / "state.json.spare").st_ino}), inodes)
        << "write " << n << " made a new file instead of rewriting the spare";
    EXPECT_EQ(names_in(dir.path()).size(), 3U);
  }
}

TEST(ReservedRecordFile, ThePaddedRecordIsOneJsonDocument) {
  const TempDir dir;
  ReservedRecordFile record(dir / "state.json", kCapacity);
  record.write(R"({"state": "done", "exit_code": 0})");
  record.write(R"({"state": "failed", "exit_code": 9})");
  const nlohmann::json data = nlohmann::json::parse(read_file(dir / "state.json"));
  EXPECT_EQ(data.at("exit_code"), 9);
  EXPECT_TRUE(read_file(dir / "state.json").ends_with("\n"));
}

TEST(ReservedRecordFile, TakesOverARecordAnOlderVersionWroteWithoutASpare) {
  const TempDir dir;
  std::ofstream(dir / "state.json") << R"({"state": "done"})"
                                    << "\n";
  ReservedRecordFile record(dir / "state.json", kCapacity);
  record.write(R"({"state": "running"})");
  EXPECT_EQ(without_padding(read_file(dir / "state.json")), R"({"state": "running"})");
  record.write(R"({"state": "done"})");
  EXPECT_EQ(without_padding(read_file(dir / "state.json")), R"({"state": "done"})");
  EXPECT_EQ(static_cast<std::size_t>(stat_of(dir / "state.json").st_size), kCapacity);
}

TEST(ReservedRecordFile, ContentLargerThanTheCapacityIsStillWritten) {
  const TempDir dir;
  ReservedRecordFile record(dir / "state.json", 64);
  const std::string large = "{\"text\": \"" + std::string(200, 'x') + "\"}";
  record.write(large);
  EXPECT_EQ(read_file(dir / "state.json"), large);
  record.write(R"({"n": 1})");
  EXPECT_EQ(without_padding(read_file(dir / "state.json")), R"({"n": 1})");
}

// Writers in several processes (queued runs of one target share its state file) meet on the spare's flock;
// threads with their own descriptors contend for it the same way. A writer that still held the exchanged spare
// while reserving a new one once waited on its own lock, and every other writer then waited on it.
TEST(ReservedRecordFile, ConcurrentWritersOfOneRecordAllFinishWithOneWholeVersion) {
  constexpr int kRounds = 150;
  constexpr int kWriters = 8;
  constexpr int kWritesEach = 4;
  for (int round = 0; round < kRounds; ++round) {
    const TempDir dir;
    std::vector<std::string> failures(kWriters);
    std::vector<std::jthread> writers;
    for (int writer = 0; writer < kWriters; ++writer) {
      writers.emplace_back([&dir, &failures, writer] {
        ReservedRecordFile record(dir / "state.json", kCapacity);
        try {
          for (int n = 0; n < kWritesEach; ++n) {
            record.write("{\"writer\": " + std::to_string(writer) + ", \"n\": " + std::to_string(n) + "}");
          }
        } catch (const std::exception& error) {
          failures[static_cast<std::size_t>(writer)] = error.what();
        }
      });
    }
    writers.clear();
    for (const std::string& failure : failures) ASSERT_EQ(failure, "") << "round " << round;
    const nlohmann::json data = nlohmann::json::parse(read_file(dir / "state.json"));
    EXPECT_EQ(data.at("n"), kWritesEach - 1) << "round " << round;
    EXPECT_EQ(names_in(dir.path()), (std::set<std::string>{"state.json", "state.json.lock", "state.json.spare"}))
        << "round " << round;
  }
}

}  // namespace
}  // namespace hfget::util
