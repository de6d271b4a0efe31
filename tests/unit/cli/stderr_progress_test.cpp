// SPDX-License-Identifier: MIT
// When wait's and verify's progress reaches stderr: redrawn on a terminal, every interval in a log, never when quiet.
#include "cli/stderr_progress.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "cli/verify_report.hpp"

namespace hfget::cli {
namespace {

using std::chrono::seconds;

struct Written {
  std::vector<std::string> texts;
  StderrProgress::Writer writer() {
    return [this](const std::string& text) { texts.push_back(text); };
  }
};

TEST(StderrProgress, InALogWritesATimestampedLineEveryIntervalTheFirstOneIntervalIn) {
  Written written;
  const auto start = StderrProgress::Clock::time_point{} + std::chrono::hours(1);
  {
    StderrProgress progress(/*quiet=*/false, /*terminal=*/false, seconds(10), written.writer());
    progress.show("a", start);
    progress.show("b", start + seconds(5));
    EXPECT_TRUE(written.texts.empty()) << "a short run prints nothing";
    progress.show("c", start + seconds(10));
    progress.show("d", start + seconds(15));
    progress.show("e", start + seconds(21));
  }
  ASSERT_EQ(written.texts.size(), 2U);
  EXPECT_TRUE(std::regex_match(written.texts[0], std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ c\n)")))
      << written.texts[0];
  EXPECT_TRUE(written.texts[1].ends_with(" e\n")) << written.texts[1];
}

TEST(StderrProgress, OnATerminalRedrawsOneLineAndClearsIt) {
  Written written;
  {
    StderrProgress progress(false, /*terminal=*/true, seconds(10), written.writer());
    progress.show("a");
    progress.show("b");
    progress.clear();
    progress.clear();  // once is enough
  }
  EXPECT_EQ(written.texts, (std::vector<std::string>{"\r\x1b[Ka", "\r\x1b[Kb", "\r\x1b[K"}));
}

TEST(StderrProgress, QuietWritesNothing) {
  Written written;
  const auto start = StderrProgress::Clock::time_point{};
  for (const bool terminal : {false, true}) {
    StderrProgress progress(/*quiet=*/true, terminal, seconds(1), written.writer());
    for (int i = 0; i < 5; ++i) progress.show("x", start + seconds(i * 2));
  }
  EXPECT_TRUE(written.texts.empty());
}

TEST(VerifyProgressLine, SaysHowMuchIsHashedAndWhenItEnds) {
  VerifyProgress progress;
  EXPECT_EQ(verify_progress_line(progress, 1.0), "verifying: checking the files");
  progress.files_to_hash = 70;
  progress.files_hashed = 12;
  progress.bytes_to_hash = 4'000'000'000;
  progress.bytes_hashed = 1'000'000'000;
  EXPECT_EQ(verify_progress_line(progress, 2.0),
            "verifying: hashed 12/70 files, 953.7 MiB / 3.7 GiB (25.0%), 500.0 MB/s, ETA 6s");
}

}  // namespace
}  // namespace hfget::cli
