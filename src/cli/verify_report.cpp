// SPDX-License-Identifier: MIT
#include "cli/verify_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "util/byte_size.hpp"
#include "util/printable.hpp"

namespace hfget::cli {

std::string verify_progress_line(const VerifyProgress& progress, double elapsed_seconds) {
  const std::uint64_t total = progress.bytes_to_hash;
  const std::uint64_t done = std::min<std::uint64_t>(progress.bytes_hashed, total);
  if (progress.files_to_hash == 0) return "verifying: checking the files";
  const double rate = elapsed_seconds > 0 ? static_cast<double>(done) / elapsed_seconds : 0.0;
  const double percent = total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
  return fmt::format("verifying: hashed {}/{} files, {} / {} ({:.1f}%), {}, ETA {}",
                     static_cast<std::size_t>(progress.files_hashed), static_cast<std::size_t>(progress.files_to_hash),
                     util::format_binary_bytes(done), util::format_binary_bytes(total), percent,
                     util::format_rate(rate),
                     rate > 0 ? util::format_duration(static_cast<double>(total - done) / rate) : "?");
}
namespace {

std::string upper(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

double hash_rate(const VerifyReport& report) {
  const double seconds = report.elapsed.count();
  return seconds > 0 ? static_cast<double>(report.bytes_hashed) / seconds : 0.0;
}

double round_to(double value, double unit) {
  return static_cast<double>(static_cast<std::int64_t>(value / unit * 100 + 0.5)) / 100;
}

// A cause can quote a tensor name or an index key: a malicious repo chooses those, one line each.
std::string shown(std::string_view text) {
  return util::printable(text, 4096);
}

}  // namespace

std::string render_verify_report_text(const VerifyReport& report) {
  std::string out = fmt::format("{}{}commit {} in {}\n", report.repo, report.repo.empty() ? "" : " @ ", report.commit,
                                report.root.string());
  for (const CheckResult& check : report.checks) {
    out += fmt::format("  {:<4}  {:<20} {}\n", upper(to_string(check.status)), check.name, shown(check.detail));
  }
  // One line per bad file and cause, naming every check that saw it (a missing shard fails two checks).
  std::vector<std::pair<std::string, std::string>> lines;
  for (const FileProblem& problem : report.problems) {
    const std::string head = fmt::format("{}: {}", shown(problem.path), shown(problem.cause));
    const auto same = std::find_if(lines.begin(), lines.end(), [&](const auto& line) { return line.first == head; });
    if (same == lines.end()) {
      lines.emplace_back(head, problem.check);
    } else {
      same->second += ", " + problem.check;
    }
  }
  for (const auto& [head, checks] : lines) out += fmt::format("  BAD   {} [{}]\n", head, checks);
  // Without a listing only what is on disk can be counted; without hashing there is no rate to show.
  const std::string bytes = report.has_listing
                                ? util::format_bytes_both(report.bytes_expected)
                                : fmt::format("{} on disk", util::format_bytes_both(report.bytes_present));
  const std::string hashing =
      report.hashed ? fmt::format("{} hashed in {:.1f}s ({})", util::format_bytes_both(report.bytes_hashed),
                                  report.elapsed.count(), util::format_rate(hash_rate(report)))
                    : fmt::format("not hashed, checked in {:.1f}s", report.elapsed.count());
  out += fmt::format("{}: {}/{} files, shards {}/{}, {}, {}\n", report.ok() ? "OK" : "FAILED", report.files_present,
                     report.files_expected, report.shards_present, report.shards_expected, bytes, hashing);
  return out;
}

nlohmann::json verify_report_document(const VerifyReport& report) {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckResult& check : report.checks) {
    checks.push_back({{"name", check.name}, {"status", to_string(check.status)}, {"detail", check.detail}});
  }
  nlohmann::json problems = nlohmann::json::array();
  for (const FileProblem& problem : report.problems) {
    problems.push_back({{"path", problem.path}, {"check", problem.check}, {"cause", problem.cause}});
  }
  nlohmann::json document = {
      {"ok", report.ok()},
      {"repo", report.repo},
      {"commit", report.commit},
      {"root", report.root.string()},
      {"checks", checks},
      {"problems", problems},
      {"summary",
       {{"files_expected", report.files_expected},
        {"files_present", report.files_present},
        {"files_excluded", report.files_excluded},
        {"shards_expected", report.shards_expected},
        {"shards_present", report.shards_present},
        {"bytes_expected", report.bytes_expected},
        {"gb_expected", round_to(static_cast<double>(report.bytes_expected), 1e9)},
        {"gib_expected", round_to(static_cast<double>(report.bytes_expected), 1073741824.0)},
        {"bytes_present", report.bytes_present},
        {"has_listing", report.has_listing},
        {"hashed", report.hashed},
        {"bytes_hashed", report.bytes_hashed},
        {"elapsed_seconds", report.elapsed.count()},
        {"hash_bytes_per_second", hash_rate(report)}}},
  };
  return document;
}

std::string render_verify_report_json(const VerifyReport& report) {
  return verify_report_document(report).dump(2, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace) +
         "\n";
}

}  // namespace hfget::cli
