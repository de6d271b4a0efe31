// SPDX-License-Identifier: MIT
// state.json and detached.json as the library writes and reads them. What is read comes from disk, where
// anything may be: a torn or hostile file reads as no record, or as defaults, never as a crash.
#include "hfget/run_record.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/temp_dir.hpp"
#include "util/read_text_file.hpp"

namespace hfget {
namespace {

using test_support::TempDir;

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::string emoji(std::size_t count) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) text += "\xF0\x9F\x98\x80";  // U+1F600: 12 bytes as a JSON escape pair
  return text;
}

RunRecord sample_record() {
  RunRecord record;
  record.pid = 4242;
  record.state = "failed";
  record.exit_code = 7;
  record.repo = "org/model";
  record.revision = "main";
  record.commit = std::string(40, 'a');
  record.target = "/models/m";
  record.started_at = "2026-11-29T14:02:10Z";
  record.updated_at = "2026-11-29T14:05:00Z";
  record.files_done = 3;
  record.files_total = 9;
  record.shards_done = 1;
  record.shards_total = 4;
  record.bytes_done = 5'000'000'000'000ULL;  // past 2^32, and past what a double holds exactly in its fraction
  record.bytes_total = 9'007'199'254'740'993ULL;
  record.rate_bytes_per_second = 1.5e9;
  record.eta_seconds = 61.25;
  record.last_error = "HTTP 503 from cdn.example";
  record.in_flight = {{"a.safetensors", 100, 10}};
  record.files_in_flight = 1;
  record.log_file = "/var/log/hfget.log";
  return record;
}

TEST(RunRecord, ReadsBackEveryFieldItWrote) {
  const TempDir dir;
  const RunRecord written = sample_record();
  write_run_record(run_record_path(dir.path()), written);

  const std::optional<RunRecord> read = read_run_record(run_record_path(dir.path()));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->pid, written.pid);
  EXPECT_EQ(read->state, written.state);
  EXPECT_EQ(read->exit_code, written.exit_code);
  EXPECT_EQ(read->repo, written.repo);
  EXPECT_EQ(read->revision, written.revision);
  EXPECT_EQ(read->commit, written.commit);
  EXPECT_EQ(read->target, written.target);
  EXPECT_EQ(read->started_at, written.started_at);
  EXPECT_EQ(read->updated_at, written.updated_at);
  EXPECT_EQ(read->files_done, written.files_done);
  EXPECT_EQ(read->files_total, written.files_total);
  EXPECT_EQ(read->shards_done, written.shards_done);
  EXPECT_EQ(read->shards_total, written.shards_total);
  EXPECT_EQ(read->bytes_done, written.bytes_done);
  EXPECT_EQ(read->bytes_total, written.bytes_total) << "counters are integers, not doubles";
  EXPECT_EQ(read->rate_bytes_per_second, written.rate_bytes_per_second);
  EXPECT_EQ(read->eta_seconds, written.eta_seconds);
  EXPECT_EQ(read->last_error, written.last_error);
  ASSERT_EQ(read->in_flight.size(), 1u);
  EXPECT_EQ(read->in_flight[0].path, "a.safetensors");
  EXPECT_EQ(read->in_flight[0].size, 100u);
  EXPECT_EQ(read->in_flight[0].bytes_done, 10u);
  EXPECT_EQ(read->files_in_flight, 1u);
  EXPECT_EQ(read->log_file, written.log_file);
}

TEST(RunRecord, IsWrittenIntoItsReservedSpaceWithTheFieldNamesStatusReads) {
  const TempDir dir;
  RunRecord record = sample_record();
  record.exit_code.reset();
  record.eta_seconds.reset();
  record.log_file.clear();
  write_run_record(run_record_path(dir.path()), record);

  EXPECT_EQ(std::filesystem::file_size(dir / "state.json"), 16u * 1024u);
  EXPECT_TRUE(std::filesystem::exists(dir / "state.json.spare")) << "the space for the next write, reserved";
  const nlohmann::json data = nlohmann::json::parse(*util::read_text_file(dir / "state.json"));
  for (const char* key : {"pid",          "state",      "exit_code",   "repo",
                          "revision",     "commit",     "target",      "started_at",
                          "updated_at",   "files_done", "files_total", "shards_done",
                          "shards_total", "bytes_done", "bytes_total", "rate_bytes_per_second",
                          "eta_seconds",  "last_error", "in_flight",   "files_in_flight"}) {
    EXPECT_TRUE(data.contains(key)) << key;
  }
  EXPECT_TRUE(data["exit_code"].is_null()) << "while it runs";
  EXPECT_TRUE(data["eta_seconds"].is_null()) << "not known yet";
  EXPECT_FALSE(data.contains("log_file")) << "only a run with a log file names one";
  EXPECT_EQ(nlohmann::json::parse(read_run_record(dir / "state.json")->as_written), data)
      << "status --json prints the file's fields as written";
}

TEST(RunRecord, NamesTheTenFilesWithTheMostLeftAndCountsThemAll) {
  const TempDir dir;
  RunRecord record = sample_record();
  record.in_flight.clear();
  for (std::uint64_t i = 0; i < 12; ++i) record.in_flight.push_back({"f" + std::to_string(i), 100, i * 5});
  record.in_flight.push_back({"overdone", 10, 50});  // more received than its size: never reads as negative
  record.files_in_flight = record.in_flight.size();
  write_run_record(run_record_path(dir.path()), record);

  const std::optional<RunRecord> read = read_run_record(run_record_path(dir.path()));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->files_in_flight, 13u);
  ASSERT_EQ(read->in_flight.size(), kRunRecordNamedFiles);
  EXPECT_EQ(read->in_flight.front().path, "f0") << "the most left first";
  EXPECT_EQ(read->in_flight.back().path, "f9");
}

// A hostile repo's paths can make the record far larger than its character budgets suggest; it must still
// fit the space reserved for it, or a full disk loses the final record (status says "died").
TEST(RunRecord, ARecordTooLargeForItsSpaceShedsNamedFilesThenShortensItsTexts) {
  const TempDir dir;
  RunRecord record = sample_record();
  record.repo = "org/" + emoji(90);
  record.target = "/models/" + emoji(400);
  record.log_file = "/logs/" + emoji(400);
  record.last_error = "No space left on device: " + emoji(2000);
  record.in_flight.clear();
  for (int i = 0; i < 10; ++i) record.in_flight.push_back({emoji(500) + std::to_string(i), 100, 10});
  record.files_in_flight = 10;
  write_run_record(run_record_path(dir.path()), record);

  EXPECT_EQ(std::filesystem::file_size(dir / "state.json"), 16u * 1024u) << "written into the reserved space";
  const std::optional<RunRecord> read = read_run_record(run_record_path(dir.path()));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->state, "failed");
  EXPECT_EQ(read->exit_code, 7);
  EXPECT_LT(read->in_flight.size(), 10u);
  EXPECT_EQ(read->files_in_flight, 10u) << "still counted";
  EXPECT_TRUE(read->last_error.starts_with("No space left on device: ")) << "shortened, its cause kept";
}

TEST(RunRecord, ThereIsNoneBeforeTheFirstWrite) {
  const TempDir dir;
  EXPECT_EQ(read_run_record(run_record_path(dir.path())), std::nullopt);
}

TEST(RunRecord, ATruncatedRecordIsNone) {
  const TempDir dir;
  write_run_record(run_record_path(dir.path()), sample_record());
  const std::string text = *util::read_text_file(dir / "state.json");
  write_text(dir / "state.json", text.substr(0, text.find("\"repo\"")));
  EXPECT_EQ(read_run_record(run_record_path(dir.path())), std::nullopt);
}

TEST(RunRecord, WhatIsNotARecordIsNone) {
  const TempDir dir;
  for (const std::string& text :
       std::vector<std::string>{"", "null", "[]", "\"running\"", "{}", "{\"pid\": 12}", "{\"state\": \"running\"}",
                                "{\"pid\": \"12\", \"state\": \"running\"}", "{\"pid\": 1.5, \"state\": \"done\"}",
                                "{\"pid\": 12, \"state\": 3}", "{\"pid\": 99999999999999999999, \"state\": \"done\"}",
                                std::string("\x00\xff{\"pid\"", 7)}) {
    write_text(dir / "state.json", text);
    EXPECT_EQ(read_run_record(run_record_path(dir.path())), std::nullopt) << text;
  }
}

TEST(RunRecord, FieldsOfTheWrongTypeReadAsTheirDefaults) {
  const TempDir dir;
  write_text(dir / "state.json", R"({"pid": 12, "state": "running", "exit_code": "0", "repo": 5, "bytes_done": -3,
    "files_total": 2.5, "rate_bytes_per_second": "fast", "eta_seconds": "soon", "files_in_flight": {},
    "in_flight": [1, "x", null, {"path": 7}, {"size": 3}, {"path": "kept", "size": -1, "bytes_done": "2"}],
    "log_file": ["x"]})");
  const std::optional<RunRecord> read = read_run_record(run_record_path(dir.path()));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->pid, 12);
  EXPECT_EQ(read->state, "running");
  EXPECT_EQ(read->exit_code, std::nullopt);
  EXPECT_EQ(read->repo, "");
  EXPECT_EQ(read->bytes_done, 0u);
  EXPECT_EQ(read->files_total, 0u);
  EXPECT_EQ(read->rate_bytes_per_second, 0.0);
  EXPECT_EQ(read->eta_seconds, std::nullopt);
  EXPECT_EQ(read->files_in_flight, 0u);
  ASSERT_EQ(read->in_flight.size(), 1u) << "only entries with a path";
  EXPECT_EQ(read->in_flight[0].path, "kept");
  EXPECT_EQ(read->in_flight[0].size, 0u);
  EXPECT_EQ(read->in_flight[0].bytes_done, 0u);
  EXPECT_EQ(read->log_file, "");
}

TEST(RunRecord, AnExitCodeNoProcessCanHaveIsNone) {
  const TempDir dir;
  write_text(dir / "state.json", R"({"pid": 12, "state": "failed", "exit_code": 4294967296})");
  const std::optional<RunRecord> read = read_run_record(run_record_path(dir.path()));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->exit_code, std::nullopt) << "not 0, which is what it wraps to as an int";
}

// Nested arrays are parsed, copied and freed recursively: half a million of them would exhaust the stack.
TEST(RunRecord, ADeeplyNestedFileIsNoneAndDoesNotCrash) {
  const TempDir dir;
  const std::size_t depth = 500'000;
  write_text(dir / "state.json",
             R"({"pid": 12, "state": "done", "x": )" + std::string(depth, '[') + std::string(depth, ']') + "}");
  EXPECT_EQ(read_run_record(run_record_path(dir.path())), std::nullopt);
}

TEST(RunRecord, BracketsInsideTextsAreNotNesting) {
  const TempDir dir;
  write_text(dir / "state.json", R"({"pid": 12, "state": "done", "last_error": "[[[[[[[[[[{{{{{{{{{{ \"[[[[[[[[["})");
  const std::optional<RunRecord> read = read_run_record(run_record_path(dir.path()));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->last_error, R"([[[[[[[[[[{{{{{{{{{{ "[[[[[[[[[)");
}

TEST(RunRecord, AFileOverAMebibyteIsNotRead) {
  const TempDir dir;
  write_text(dir / "state.json", R"({"pid": 12, "state": "done", "last_error": ")" + std::string(1 << 20, 'x') + "\"}");
  EXPECT_EQ(read_run_record(run_record_path(dir.path())), std::nullopt);
}

TEST(DetachedLaunch, ReadsBackThePidTheStartAndTheLog) {
  const TempDir dir;
  write_detached_launch(dir.path(), 4242, "/var/log/hfget.log");
  EXPECT_EQ(detached_launch_path(dir.path()), dir / "detached.json");
  const std::optional<DetachedLaunch> launch = read_detached_launch(dir.path());
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->pid, 4242);
  EXPECT_TRUE(launch->started_at.has_value());
  EXPECT_EQ(launch->log, "/var/log/hfget.log");
}

TEST(DetachedLaunch, AnOlderRecordWithoutALogStillNamesItsProcess) {
  const TempDir dir;
  write_text(dir / "detached.json", R"({"pid": 77, "started_at": "2026-11-29T14:02:10Z"})");
  const std::optional<DetachedLaunch> launch = read_detached_launch(dir.path());
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->pid, 77);
  EXPECT_EQ(launch->log, "");
}

TEST(DetachedLaunch, WhatNamesNoProcessIsNone) {
  const TempDir dir;
  EXPECT_EQ(read_detached_launch(dir.path()), std::nullopt) << "no launch";
  for (const char* text :
       {"{\"log\": \"x\"}", "{\"pid\": \"77\"}", "[77]", "{\"pid\": 77", "{\"pid\": [[[[[77]]]]]}"}) {
    write_text(dir / "detached.json", text);
    EXPECT_EQ(read_detached_launch(dir.path()), std::nullopt) << text;
  }
}

}  // namespace
}  // namespace hfget
