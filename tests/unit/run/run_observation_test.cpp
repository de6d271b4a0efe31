// SPDX-License-Identifier: MIT
// What status and wait conclude from the two records and the processes alive now. Live PIDs are this test's
// own and its parent's; a dead one is a child that has exited and been reaped.
#include "hfget/run_observation.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/dead_pid.hpp"
#include "support/temp_dir.hpp"
#include "util/process_owner.hpp"
#include "util/utc_timestamp.hpp"

namespace hfget {
namespace {

using test_support::dead_pid;
using test_support::TempDir;

void record(const std::filesystem::path& state_dir, long pid, const std::string& state,
            const std::string& started_at = util::utc_timestamp(), const std::string& log_file = "") {
  RunRecord run;
  run.pid = pid;
  run.state = state;
  run.started_at = started_at;
  run.log_file = log_file;
  if (state != "running") run.exit_code = state == "done" ? 0 : 7;
  write_run_record(run_record_path(state_dir), run);
}

TEST(RunObservation, NoRecordsIsNone) {
  const TempDir dir;
  const RunObservation seen = observe_run(dir.path());
  EXPECT_EQ(seen.phase, RunPhase::kNone);
  EXPECT_FALSE(seen.record.has_value());
  EXPECT_FALSE(seen.detached_pid.has_value());
}

TEST(RunObservation, ARunningRecordOfALiveProcessIsRunning) {
  const TempDir dir;
  record(dir.path(), ::getpid(), "running");
  const RunObservation seen = observe_run(dir.path());
  EXPECT_EQ(seen.phase, RunPhase::kRunning);
  ASSERT_TRUE(seen.record.has_value());
  EXPECT_EQ(seen.record->pid, ::getpid());
}

TEST(RunObservation, ARunningRecordWhoseProcessIsGoneDied) {
  const TempDir dir;
  record(dir.path(), dead_pid(), "running");
  EXPECT_EQ(observe_run(dir.path()).phase, RunPhase::kDied);
}

// After a reboot the recorded PID may be another process's: one that started after the run did is not it.
TEST(RunObservation, APidReusedByAProcessStartedAfterTheRunDied) {
  const TempDir dir;
  record(dir.path(), ::getpid(), "running", "2000-01-01T00:00:00Z");
  EXPECT_EQ(observe_run(dir.path()).phase, RunPhase::kDied);
}

TEST(RunObservation, AFinishedRunEnded) {
  const TempDir dir;
  record(dir.path(), dead_pid(), "failed");
  const RunObservation seen = observe_run(dir.path());
  EXPECT_EQ(seen.phase, RunPhase::kEnded);
  ASSERT_TRUE(seen.record.has_value());
  EXPECT_EQ(seen.record->exit_code, 7);
}

TEST(RunObservation, ALiveLaunchWithoutARecordIsStartingAndShowsItsLog) {
  const TempDir dir;
  write_detached_launch(dir.path(), ::getpid(), "/logs/download.log");
  const RunObservation seen = observe_run(dir.path());
  EXPECT_EQ(seen.phase, RunPhase::kStarting);
  EXPECT_EQ(seen.detached_pid, ::getpid());
  EXPECT_EQ(seen.log, "/logs/download.log");
}

TEST(RunObservation, ALaunchThatDiedBeforeItWroteARecordDied) {
  const TempDir dir;
  write_detached_launch(dir.path(), dead_pid(), "/logs/download.log");
  const RunObservation seen = observe_run(dir.path());
  EXPECT_EQ(seen.phase, RunPhase::kDied);
  EXPECT_FALSE(seen.record.has_value());
}

TEST(RunObservation, ALiveLaunchAfterARunThatDiedIsStarting) {
  const TempDir dir;
  record(dir.path(), dead_pid(), "running");
  write_detached_launch(dir.path(), ::getpid(), "/logs/download.log");
  EXPECT_EQ(observe_run(dir.path()).phase, RunPhase::kStarting);
}

TEST(RunObservation, ALiveLaunchQueuedBehindAFinishedRunIsStarting) {
  const TempDir dir;
  record(dir.path(), dead_pid(), "done");
  write_detached_launch(dir.path(), ::getpid(), "/logs/new.log");
  const RunObservation seen = observe_run(dir.path());
  EXPECT_EQ(seen.phase, RunPhase::kStarting);
  EXPECT_EQ(seen.log, "") << "the record is another run's, and names no log";
}

TEST(RunObservation, TheRecordsOwnLogComesBeforeTheLaunchs) {
  const TempDir dir;
  write_detached_launch(dir.path(), ::getpid(), "/logs/download.log");
  record(dir.path(), ::getpid(), "running", util::utc_timestamp(), "/logs/own.log");
  EXPECT_EQ(observe_run(dir.path()).log, "/logs/own.log");
  record(dir.path(), ::getpid(), "running");
  EXPECT_EQ(observe_run(dir.path()).log, "/logs/download.log") << "the launch is this run";
  EXPECT_EQ(observe_run(dir.path()).phase, RunPhase::kRunning);
}

TEST(RunObservation, AnotherLiveRunIsOnlyARunningRecordOfAnotherLiveProcess) {
  const TempDir dir;
  const std::filesystem::path path = run_record_path(dir.path());
  EXPECT_FALSE(another_run_is_recorded_live(path, ::getpid())) << "no record";
  record(dir.path(), ::getpid(), "running");
  EXPECT_FALSE(another_run_is_recorded_live(path, ::getpid())) << "this process's own";
  record(dir.path(), ::getppid(), "running");
  EXPECT_TRUE(another_run_is_recorded_live(path, ::getpid()));
  record(dir.path(), ::getppid(), "done");
  EXPECT_FALSE(another_run_is_recorded_live(path, ::getpid())) << "ended";
  record(dir.path(), dead_pid(), "running");
  EXPECT_FALSE(another_run_is_recorded_live(path, ::getpid())) << "died";
}

TEST(ProcessAlive, NotForPidsNoProcessHas) {
  EXPECT_FALSE(process_alive(0, std::nullopt)) << "kill(0) would ask this process group";
  EXPECT_FALSE(process_alive(-1, std::nullopt)) << "kill(-1) would ask every process";
  EXPECT_FALSE(process_alive((1L << 32) + 1, std::nullopt)) << "would wrap to PID 1 as a pid_t";
  EXPECT_TRUE(process_alive(::getpid(), std::nullopt));
}

// A killed process its parent has not reaped yet still answers kill(pid, 0).
TEST(ProcessAlive, NotForAZombie) {
  const pid_t child = ::fork();
  if (child == 0) _exit(0);
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0) << "it has exited, unreaped";
  const std::optional<util::ProcessStat> stat = util::read_process_stat(child);
  const bool alive = process_alive(child, std::nullopt);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->state, 'Z');
  EXPECT_FALSE(alive);
}

}  // namespace
}  // namespace hfget
