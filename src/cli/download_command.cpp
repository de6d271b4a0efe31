// SPDX-License-Identifier: MIT
// `hfget download`: flags as `hf download` names them, settings from the environment as huggingface_hub
// reads them, people-facing output on stderr and the snapshot path (only) on stdout.
#include "cli/download_command.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>

#include "cli/progress_printer.hpp"
#include "hfget/download.hpp"
#include "hfget/environment.hpp"
#include "hfget/error.hpp"
#include "util/byte_size.hpp"
#include "util/env.hpp"

namespace hfget::cli {
namespace {

struct DownloadFlags {
  std::string repo_id;
  std::vector<std::string> files;
  std::string revision = "main";
  std::string repo_type = "model";
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  std::string local_dir;
  std::string cache_dir;
  std::string token;
  std::string endpoint;
  int max_workers = 8;
  int retries = 8;
  int stall_timeout_seconds = 60;
  int progress_interval_seconds = 10;
  bool dry_run = false;
  bool quiet = false;
  bool verbose = false;
};

// Test-only: integration tests shorten the backoff so retry scenarios run in seconds (docs/cli.md says so).
std::chrono::milliseconds retry_base_delay() {
  if (std::optional<std::string> value = util::env_nonempty("HFGET_RETRY_BASE_MS")) {
    try {
      return std::chrono::milliseconds(std::stoll(*value));
    } catch (const std::exception&) {
      throw Error(ErrorCode::kUsage, "HFGET_RETRY_BASE_MS must be a number of milliseconds");
    }
  }
  return std::chrono::milliseconds(1000);
}

DownloadOptions to_options(const DownloadFlags& flags, const HubEnvironment& env) {
  const std::optional<RepoType> type = parse_repo_type(flags.repo_type);
  if (!type) throw Error(ErrorCode::kUsage, "--repo-type must be model, dataset or space");
  DownloadOptions options;
  options.repo = RepoId::parse(flags.repo_id, *type);
  options.revision = flags.revision;
  options.selection = {flags.files, flags.include, flags.exclude};
  if (!flags.local_dir.empty()) options.local_dir = std::filesystem::absolute(util::expand_user_and_vars(flags.local_dir));
  options.cache_dir =
      std::filesystem::absolute(flags.cache_dir.empty() ? env.hub_cache : util::expand_user_and_vars(flags.cache_dir));
  options.endpoint = flags.endpoint.empty() ? env.endpoint : flags.endpoint;
  while (!options.endpoint.empty() && options.endpoint.back() == '/') options.endpoint.pop_back();
  options.token = flags.token.empty() ? env.token : Secret(clean_token(flags.token));
  options.max_workers = flags.max_workers;
  options.dry_run = flags.dry_run;
  options.offline = env.offline;
  if (flags.retries < 0 || flags.retries > 100) throw Error(ErrorCode::kUsage, "--retries must be between 0 and 100");
  options.max_attempts = flags.retries + 1;
  if (flags.stall_timeout_seconds < 1) throw Error(ErrorCode::kUsage, "--stall-timeout must be at least 1 second");
  options.stall_timeout = std::chrono::seconds(flags.stall_timeout_seconds);
  options.retry_base_delay = retry_base_delay();
  options.ca_bundle = env.ca_bundle;
  options.ca_path = env.ca_path;
  return options;
}

ProgressStyle choose_style(const DownloadFlags& flags, const HubEnvironment& env) {
  if (flags.quiet) return ProgressStyle::kSilent;
  if (::isatty(STDERR_FILENO) == 1 && !env.progress_bars_disabled) return ProgressStyle::kTerminal;
  return ProgressStyle::kLogLines;
}

void print_plan(const DownloadReport& report) {
  std::size_t to_fetch = 0;
  std::uint64_t bytes_to_fetch = 0;
  for (const PlannedFile& planned : report.files) {
    if (planned.complete) continue;
    ++to_fetch;
    bytes_to_fetch += planned.file.size;
  }
  fmt::print("[dry-run] commit {}: {} file(s) selected ({}); {} to download ({}), {} already complete\n",
             report.commit, report.files.size(), util::format_bytes_both(report.bytes_selected), to_fetch,
             util::format_bytes_both(bytes_to_fetch), report.files.size() - to_fetch);
  fmt::print("{:<60} {:>16} {:>12}  {}\n", "FILE", "BYTES", "SIZE", "ACTION");
  for (const PlannedFile& planned : report.files) {
    fmt::print("{:<60} {:>16} {:>12}  {}\n", planned.file.path, planned.file.size,
               util::format_binary_bytes(planned.file.size), planned.complete ? "present" : "download");
  }
}

int run_download(const DownloadFlags& flags, std::stop_token stop) {
  const HubEnvironment env = HubEnvironment::from_process_environment();
  const DownloadOptions options = to_options(flags, env);
  spdlog::set_level(flags.verbose ? spdlog::level::debug : flags.quiet ? spdlog::level::err : spdlog::level::warn);

  ProgressPrinter printer(flags.dry_run ? ProgressStyle::kSilent : choose_style(flags, env),
                          std::chrono::seconds(flags.progress_interval_seconds));
  const DownloadReport report = download(options, printer, std::move(stop));
  printer.finish();

  if (options.dry_run) {
    print_plan(report);
    return 0;
  }
  const double seconds = report.elapsed.count();
  printer.print_line(fmt::format("{} {} file(s), {}: {} downloaded ({}) in {:.1f}s, {} already complete",
                                 options.offline ? "found" : "fetched", report.files.size(),
                                 util::format_bytes_both(report.bytes_selected), report.files_fetched,
                                 util::format_bytes_both(report.bytes_received), seconds, report.files_already_complete));
  std::string passed;
  for (const CheckResult& check : report.checks.checks) {
    if (check.status == CheckStatus::kPass) passed += (passed.empty() ? "" : ", ") + check.name;
    if (check.status == CheckStatus::kSkip && check.detail.rfind("warning: ", 0) == 0) {
      printer.print_line(fmt::format("warning: {}: {}", check.name, check.detail.substr(9)));
    }
  }
  if (!passed.empty()) {
    printer.print_line(fmt::format("checks passed: {} (shards {}/{}; every byte hashed on arrival)", passed,
                                   report.checks.shards_present, report.checks.shards_expected));
  }
  // stdout carries the result only, so `path=$(hfget download ...)` works.
  fmt::print("{}\n", report.snapshot_path.string());
  std::fflush(stdout);
  return 0;
}

}  // namespace

std::function<int(std::stop_token)> add_download_command(CLI::App& app) {
  auto flags = std::make_shared<DownloadFlags>();
  CLI::App* command = app.add_subcommand("download", "Download a repo (or some of its files) from the Hub");
  command->add_option("repo_id", flags->repo_id, "Repo id, e.g. moonshotai/Kimi-K2.5")->required();
  command->add_option("files", flags->files, "Files (or fnmatch patterns) to download; default: all");
  command->add_option("--revision", flags->revision, "Branch, tag or commit")->capture_default_str();
  command->add_option("--repo-type", flags->repo_type, "model, dataset or space")
      ->check(CLI::IsMember({"model", "dataset", "space"}))
      ->capture_default_str();
  command->add_option("--include", flags->include, "Only files matching this pattern (repeatable)");
  command->add_option("--exclude", flags->exclude, "Skip files matching this pattern (repeatable)");
  CLI::Option* local_dir = command->add_option("--local-dir", flags->local_dir, "Download into this directory");
  CLI::Option* cache_dir = command->add_option("--cache-dir", flags->cache_dir, "HF cache directory (default: HF_HUB_CACHE)");
  local_dir->excludes(cache_dir);
  command->add_option("--token", flags->token, "Hub token (default: HF_TOKEN or the token file)");
  command->add_option("--endpoint", flags->endpoint, "Hub URL (default: HF_ENDPOINT or https://huggingface.co)");
  command->add_option("--max-workers", flags->max_workers, "Files downloaded at once")->capture_default_str();
  command->add_option("--retries", flags->retries, "Retries per file without progress")->capture_default_str();
  command->add_option("--stall-timeout", flags->stall_timeout_seconds, "Seconds without data before a retry")
      ->capture_default_str();
  command->add_option("--progress-interval", flags->progress_interval_seconds,
                      "Seconds between progress lines when stderr is not a terminal")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  command->add_flag("--dry-run", flags->dry_run, "Print what would be downloaded, write nothing");
  command->add_flag("-q,--quiet", flags->quiet, "No progress; errors only on stderr");
  command->add_flag("-v,--verbose", flags->verbose, "Log every request (tokens are never printed)");
  return [command, flags](std::stop_token stop) -> int {
    if (!command->parsed()) return -1;
    return run_download(*flags, std::move(stop));
  };
}

}  // namespace hfget::cli
