// SPDX-License-Identifier: MIT
// `hfget verify TARGET`: TARGET is a --local-dir download (a directory) or a repo id in the HF cache.
// The report goes to stdout (text or --json); the exit code says whether every check held. Progress goes to
// stderr while it hashes (minutes for a 600 GB model): a live line on a terminal, a line every
// --progress-interval otherwise; -q silences it.
#include "cli/verify_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <thread>

#include "cli/exit_code.hpp"
#include "cli/hub_options.hpp"
#include "cli/stderr_progress.hpp"
#include "cli/target.hpp"
#include "cli/verify_report.hpp"
#include "hfget/environment.hpp"
#include "hfget/error.hpp"
#include "hfget/verify.hpp"
#include "util/interruptible_sleep.hpp"
#include "util/printable.hpp"

namespace hfget::cli {
namespace {

struct VerifyFlags {
  std::string target;
  std::string revision = "main";
  std::string repo_type = "model";
  std::string cache_dir;
  std::string endpoint;
  std::string token;
  std::string ca_bundle;
  int retries = 8;
  std::vector<std::string> allow_missing;
  unsigned jobs = 0;
  bool online = false;
  bool json = false;
  bool fast = false;
  bool quiet = false;
  int progress_interval_seconds = 10;
};

constexpr auto kProgressPoll = std::chrono::milliseconds(500);

// Runs the verify while a thread shows its progress on stderr.
VerifyReport verify_with_progress(VerifyOptions& options, const VerifyFlags& flags, std::stop_token stop) {
  VerifyProgress progress;
  options.progress = &progress;
  StderrProgress line(flags.quiet, std::chrono::seconds(flags.progress_interval_seconds));
  const auto started = std::chrono::steady_clock::now();
  std::jthread ticker([&](std::stop_token done) {
    while (util::sleep_unless_stopped(kProgressPoll, done)) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      line.show(verify_progress_line(progress, elapsed));
    }
  });
  struct StopTicker {
    std::jthread& ticker;
    StderrProgress& line;
    ~StopTicker() {
      ticker.request_stop();
      ticker.join();
      line.clear();  // before the report or an error line
    }
  } stop_ticker{ticker, line};
  return verify_snapshot(options, std::move(stop));
}

// A word of a command a user may paste into a shell: repo paths and directories can hold spaces, quotes, '$'.
std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789_./:@%+=,-") == std::string::npos;
  if (plain) return word;
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// A file that is missing, the wrong size or the wrong bytes is fixed by fetching it again: name the command
// that does so for exactly those files (by name, so that it cannot widen to the whole repo when the download
// selected a part of it). A local dir does not record its repo id, so the user fills it in.
void print_repair_hint(const VerifyReport& report, const VerifyFlags& flags, const Target& target) {
  std::set<std::string> files;
  for (const FileProblem& problem : report.problems) {
    const bool refetchable = problem.check == "completeness" || problem.check == "sizes" || problem.check == "hashes" ||
                             problem.check == "safetensors_headers";
    if (refetchable && !problem.path.empty()) files.insert(problem.path);
  }
  if (files.empty()) return;
  std::string command = "hfget download " + (target.is_cache() ? target.repo().name : std::string("REPO_ID"));
  for (const std::string& file : files) command += " " + shell_word(file);
  if (flags.repo_type != "model") command += " --repo-type " + flags.repo_type;
  if (flags.revision != "main") command += " --revision " + shell_word(flags.revision);
  if (!target.is_cache()) command += " --local-dir " + shell_word(target.root().string());
  if (target.is_cache() && !flags.cache_dir.empty()) command += " --cache-dir " + shell_word(target.root().string());
  std::fprintf(stderr, "hfget: to repair: %s --verify (hashes those files on disk, downloads again those that fail)\n",
               util::printable(command, 64 * 1024).c_str());
}

int run_verify(const VerifyFlags& flags, std::stop_token stop) {
  const HubEnvironment env = HubEnvironment::from_process_environment();
  const Target target = resolve_target(flags.target, flags.repo_type, flags.cache_dir, env);
  if (!target.is_cache() && flags.online) {
    throw Error(ErrorCode::kUsage, "--online needs a repo id in the cache (a local dir does not record its repo id)");
  }
  VerifyOptions options;
  options.local_dir = target.local_dir();
  options.repo = target.repo();
  options.cache_dir = target.cache_dir();
  options.revision = flags.revision;
  options.online = flags.online;
  // The same endpoint, token and CAs as download and ls: a private CA must not work for one and not the other.
  HubFlags hub_flags;
  hub_flags.repo_type = flags.repo_type;
  hub_flags.endpoint = flags.endpoint;
  hub_flags.token = flags.token;
  hub_flags.ca_bundle = flags.ca_bundle;
  options.hub = hub_connection(hub_flags, env);
  options.hub.max_attempts = max_attempts_for_retries(flags.retries);
  options.jobs = flags.jobs;
  options.fast = flags.fast;
  options.allow_missing.insert(flags.allow_missing.begin(), flags.allow_missing.end());

  const VerifyReport report = verify_with_progress(options, flags, std::move(stop));
  const std::string rendered = flags.json ? render_verify_report_json(report) : render_verify_report_text(report);
  std::fputs(rendered.c_str(), stdout);
  std::fflush(stdout);
  if (!report.ok()) print_repair_hint(report, flags, target);
  return report.ok() ? kExitSuccess : exit_code_for(ErrorCode::kVerificationFailed);
}

}  // namespace

std::function<int(const RunContext&)> add_verify_command(CLI::App& app) {
  auto flags = std::make_shared<VerifyFlags>();
  CLI::App* command = &app;  // the subcommand, made from its row in cli/command_table.cpp
  command->add_option("target", flags->target, "A --local-dir download, or a repo id in the HF cache")->required();
  command->add_option("--revision", flags->revision, "Branch, tag or commit (cache)")->capture_default_str();
  add_repo_type_option(command, flags->repo_type);
  command->add_option("--cache-dir", flags->cache_dir, "HF cache directory (default: HF_HUB_CACHE)");
  command->add_flag("--online", flags->online, "Re-read the file listing from the Hub");
  command->add_option("--endpoint", flags->endpoint, "Hub URL, with --online");
  command->add_option("--token", flags->token, "Hub token, with --online");
  command->add_option("--ca-bundle", flags->ca_bundle,
                      "CA certificates (PEM) to trust, with --online (default: CURL_CA_BUNDLE, SSL_CERT_FILE)");
  command->add_option("--retries", flags->retries, "Retries per Hub request, with --online")->capture_default_str();
  command->add_flag("--json", flags->json, "Print one JSON report on stdout");
  command->add_option("--jobs", flags->jobs, "Files hashed at once (default: the number of cores)");
  command->add_flag("--fast", flags->fast, "Skip hashing: sizes, headers and structure only");
  command->add_flag("-q,--quiet", flags->quiet, "No progress on stderr");
  command
      ->add_option("--progress-interval", flags->progress_interval_seconds,
                   "Seconds between progress lines when stderr is not a terminal")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  command->add_option("--allow-missing", flags->allow_missing, "Do not fail when the repo has no tokenizer or config")
      ->check(CLI::IsMember({"tokenizer", "config"}));
  return [command, flags](const RunContext& context) -> int {
    if (!command->parsed()) return -1;
    return run_verify(*flags, context.stop);
  };
}

}  // namespace hfget::cli
