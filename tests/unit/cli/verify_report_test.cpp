// SPDX-License-Identifier: MIT
// The summary line of `hfget verify` says what was counted and whether the bytes were read.
#include "cli/verify_report.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace hfget::cli {
namespace {

std::string last_line(const std::string& text) {
  const std::size_t end = text.find_last_not_of('\n');
  const std::size_t begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1,
                     end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

VerifyReport hashed_report() {
  VerifyReport report;
  report.commit = std::string(40, 'a');
  report.files_expected = report.files_present = 3;
  report.shards_expected = report.shards_present = 2;
  report.has_listing = true;
  report.hashed = true;
  report.bytes_expected = report.bytes_present = report.bytes_hashed = 3'000'000'000;
  report.elapsed = std::chrono::duration<double>(1.5);
  return report;
}

TEST(VerifyReportSummary, HashedShowsTheListedSizeAndTheRate) {
  EXPECT_EQ(last_line(render_verify_report_text(hashed_report())),
            "OK: 3/3 files, shards 2/2, 3.0 GB (2.8 GiB), 3.0 GB (2.8 GiB) hashed in 1.5s (2.0 GB/s)");
}

TEST(VerifyReportSummary, WithoutAListingCountsTheBytesOnDiskAndSaysNothingWasHashed) {
  VerifyReport report = hashed_report();
  report.has_listing = false;
  report.hashed = false;
  report.bytes_expected = report.bytes_hashed = 0;
  report.bytes_present = 1'500'000;
  EXPECT_EQ(last_line(render_verify_report_text(report)),
            "OK: 3/3 files, shards 2/2, 1.5 MB (1.4 MiB) on disk, not hashed, checked in 1.5s");
  const nlohmann::json summary = nlohmann::json::parse(render_verify_report_json(report))["summary"];
  EXPECT_EQ(summary["bytes_present"], 1'500'000);
  EXPECT_EQ(summary["has_listing"], false);
  EXPECT_EQ(summary["hashed"], false);
  EXPECT_EQ(summary["bytes_expected"], 0);
}

TEST(VerifyReportSummary, FastKeepsTheListedSizeAndSaysNothingWasHashed) {
  VerifyReport report = hashed_report();
  report.hashed = false;
  report.bytes_hashed = 0;
  EXPECT_EQ(last_line(render_verify_report_text(report)),
            "OK: 3/3 files, shards 2/2, 3.0 GB (2.8 GiB), not hashed, checked in 1.5s");
}

}  // namespace
}  // namespace hfget::cli
