// SPDX-License-Identifier: MIT
// `hfget download`: flags as `hf download` names them, settings from the environment as huggingface_hub
// reads them, progress for people on stderr (a live block on a terminal, timestamped lines otherwise, JSON
// lines on request), the state file for `status`/`wait`, and the snapshot path (only) on stdout.
#include "cli/download_command.hpp"

#include <fmt/format.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>

#include "cli/detach.hpp"
#include "cli/download_result.hpp"
#include "cli/exit_code.hpp"
#include "cli/hub_options.hpp"
#include "cli/printable_log_formatter.hpp"
#include "cli/progress_reporter.hpp"
#include "cli/state_file.hpp"
#include "cli/target.hpp"
#include "hfget/download.hpp"
#include "hfget/environment.hpp"
#include "hfget/error.hpp"
#include "hfget/library.hpp"
#include "util/byte_size.hpp"
#include "util/env.hpp"
#include "util/printable.hpp"

namespace hfget::cli {
namespace {

struct DownloadFlags {
  std::string repo_id;
  std::vector<std::string> files;
  std::string revision = "main";
  bool revision_given = false;
  HubFlags hub;
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  std::string local_dir;
  std::string cache_dir;
  std::string progress = "auto";
  std::string log_file;
  int max_workers = 12;
  std::optional<int> connections;  // unset: adaptive
  int max_connections = 64;
  std::string chunk_size;
  int retries = 8;
  int stall_timeout_seconds = 60;
  std::string speed_limit = "1k";
  std::string max_speed;  // empty: HFGET_MAX_SPEED, else no limit
  int retry_max_time_seconds = 600;
  int progress_interval_seconds = 10;
  bool dry_run = false;
  bool quiet = false;
  bool verbose = false;
  bool detach = false;
  bool no_space_check = false;
  bool no_wait = false;
  bool json = false;
  bool allow_empty = false;
  // `hf download` / huggingface-cli spellings a deploy script may carry; accepted, warned about, no effect.
  bool resume_download = false;
  std::string local_dir_use_symlinks;
  bool force_download = false;
  bool verify_present = false;
  bool no_xet = false;
  bool no_chunk_reuse = false;
};

// --max-speed, else HFGET_MAX_SPEED (the flag wins, also with 0), in bytes/s with curl's --limit-rate
// suffixes (k, m, g: powers of 1024; decimals as in 1.5G); 0 or neither: no limit.
std::uint64_t max_bytes_per_second(const std::string& flag) {
  const bool from_flag = !flag.empty();
  const std::optional<std::string> text = from_flag ? std::optional(flag) : util::env_nonempty("HFGET_MAX_SPEED");
  if (!text) return 0;
  const std::optional<std::uint64_t> bytes = util::parse_byte_size(*text);
  if (!bytes) {
    throw Error(ErrorCode::kUsage,
                fmt::format("{} must be a rate in bytes/s, e.g. 200M, 1.5G or 0 (no limit), not '{}'",
                            from_flag ? "--max-speed" : "HFGET_MAX_SPEED", util::printable(*text)));
  }
  return *bytes;
}

// The flags as the library's options: sizes and rates are parsed here, every check is the library's
// (check_download_options); those of the values parsed here run now, so that such a flag fails before the
// run starts (no state record, no log file), and the rest when download() starts.
DownloadOptions to_options(const DownloadFlags& flags, const HubEnvironment& env) {
  DownloadOptions options;
  options.hub = hub_connection(flags.hub, env);
  NamedRepo named = named_repo(flags.repo_id, flags.hub, flags.revision, flags.revision_given, options.hub.endpoint);
  options.repo = std::move(named.repo);
  options.revision = std::move(named.revision);
  options.selection = {flags.files, flags.include, flags.exclude, flags.allow_empty};
  if (!flags.local_dir.empty())
    options.local_dir = std::filesystem::absolute(util::expand_user_and_vars(flags.local_dir));
  options.cache_dir = cache_dir_from(flags.cache_dir, env);
  options.max_workers = flags.max_workers;
  options.connections = flags.connections;
  options.max_connections = flags.max_connections;
  if (!flags.chunk_size.empty()) {
    const std::optional<std::uint64_t> bytes = util::parse_byte_size(flags.chunk_size);
    if (!bytes) throw Error(ErrorCode::kUsage, "--chunk-size must be a size of at least 64KiB, e.g. 32MiB");
    options.chunk_bytes = *bytes;
    check_chunk_bytes(options.chunk_bytes);
  }
  options.dry_run = flags.dry_run;
  options.offline = env.offline;
  options.symlinks_disabled = env.symlinks_disabled;
  options.xet = !flags.no_xet && !env.xet_disabled;
  options.reuse_chunks = !flags.no_chunk_reuse;
  options.hub.max_attempts = max_attempts_for_retries(flags.retries);
  options.hub.stall_timeout = std::chrono::seconds(flags.stall_timeout_seconds);
  const std::optional<std::uint64_t> speed_limit = util::parse_byte_size(flags.speed_limit);
  if (!speed_limit) throw Error(ErrorCode::kUsage, "--speed-limit must be a rate in bytes/s, e.g. 1k or 0");
  options.hub.speed_limit = *speed_limit;
  options.hub.retry_max_time = std::chrono::seconds(flags.retry_max_time_seconds);
  options.max_bytes_per_second = max_bytes_per_second(flags.max_speed);
  check_hub_connection(options.hub);
  options.check_space = !flags.no_space_check;
  options.wait_for_lock = !flags.no_wait;
  options.force_download = flags.force_download;
  options.verify_present = flags.verify_present;
  return options;
}

// With --progress json every stderr line is a JSON object: diagnostics become {"event": "log", ...} lines.
class JsonLogSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    const nlohmann::json line = {{"event", "log"},
                                 {"level", std::string(spdlog::level::to_string_view(message.level).data(),
                                                       spdlog::level::to_string_view(message.level).size())},
                                 {"message", printable_payload(message)},
                                 {"time", utc_timestamp(message.time)}};
    std::fputs((line.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace) + "\n").c_str(),
               stderr);
  }
  void flush_() override { std::fflush(stderr); }
};

// One sink per destination: stderr at the verbosity asked for, and the --log-file (diagnostics and progress
// lines, whatever the terminal shows). Returns the writer for progress lines into the log file, if any.
std::optional<LineWriter> configure_logging(const DownloadFlags& flags) {
  spdlog::sink_ptr stderr_sink;
  if (flags.progress == "json") {
    stderr_sink = std::make_shared<JsonLogSink>();
  } else {
    stderr_sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  }
  stderr_sink->set_level(flags.verbose ? spdlog::level::debug : flags.quiet ? spdlog::level::err : spdlog::level::warn);
  std::vector<spdlog::sink_ptr> sinks{stderr_sink};
  std::shared_ptr<spdlog::logger> progress_logger;
  if (!flags.log_file.empty()) {
    auto file_sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(flags.log_file, /*truncate=*/false);
    file_sink->set_level(flags.verbose ? spdlog::level::debug : spdlog::level::info);
    sinks.push_back(file_sink);
    progress_logger = std::make_shared<spdlog::logger>("progress", file_sink);
    progress_logger->flush_on(spdlog::level::info);
  }
  auto logger = std::make_shared<spdlog::logger>("hfget", sinks.begin(), sinks.end());
  logger->set_level(spdlog::level::debug);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  // Each sink has its own format (set last, the logger would override it), in UTC like the progress lines.
  stderr_sink->set_formatter(std::make_unique<PrintableLogFormatter>("%Y-%m-%dT%H:%M:%SZ %l %v"));
  if (!progress_logger) return std::nullopt;
  sinks.back()->set_formatter(std::make_unique<PrintableLogFormatter>("%Y-%m-%dT%H:%M:%SZ %v"));
  return LineWriter([progress_logger](const std::string& line) { progress_logger->info(line); });
}

std::vector<std::unique_ptr<ProgressView>> make_views(const DownloadFlags& flags, const DownloadOptions& options,
                                                      const HubEnvironment& env,
                                                      const std::optional<LineWriter>& log_file_writer) {
  std::vector<std::unique_ptr<ProgressView>> views;
  const auto interval = std::chrono::seconds(flags.progress_interval_seconds);
  if (flags.dry_run) return views;
  if (flags.progress == "json") {
    views.push_back(make_json_lines_view(stderr, interval));
  } else if (!flags.quiet) {
    if (flags.progress == "auto" && ::isatty(STDERR_FILENO) == 1 && !env.progress_bars_disabled) {
      views.push_back(make_terminal_view(stderr));
    } else {
      views.push_back(make_log_line_view(
          [](const std::string& line) {
            std::fputs(fmt::format("{} {}\n", utc_timestamp(), line).c_str(), stderr);
            std::fflush(stderr);
          },
          interval, /*report_outcome=*/false));
    }
  }
  if (log_file_writer) views.push_back(make_log_line_view(*log_file_writer, interval, /*report_outcome=*/true));
  const Target target = options.target();
  const std::string log_file = flags.log_file.empty() ? "" : std::filesystem::absolute(flags.log_file).string();
  views.push_back(make_state_file_view(state_file_path(target.state_dir()), options.repo.name, options.revision,
                                       target.root().string(), log_file, flags.detach));
  return views;
}

void print_plan(const DownloadReport& report) {
  std::size_t to_fetch = 0;
  std::uint64_t to_copy = 0;
  for (const PlannedFile& planned : report.files) {
    to_fetch += planned.complete ? 0 : 1;
    to_copy += planned.bytes_to_copy;
  }
  fmt::print("[dry-run] commit {}: {} file(s) selected ({}); {} to download ({}), {} already complete\n", report.commit,
             report.files.size(), util::format_bytes_both(report.bytes_selected), to_fetch,
             util::format_bytes_both(report.bytes_to_fetch), report.files.size() - to_fetch);
  if (to_copy > 0) {
    fmt::print(
        "[dry-run] of those, {} would be copied from files already here (Xet chunks an earlier revision "
        "holds) and {} fetched\n",
        util::format_bytes_both(to_copy),
        util::format_bytes_both(report.bytes_to_fetch - std::min(report.bytes_to_fetch, to_copy)));
  }
  if (report.free_bytes) {
    fmt::print("[dry-run] free space at the target: {}{}\n", util::format_bytes_both(*report.free_bytes),
               report.bytes_to_fetch > *report.free_bytes ? " — NOT ENOUGH" : "");
  }
  // The COPIED column only when something would be: the table is otherwise as it always was.
  const std::string copied_header = to_copy > 0 ? fmt::format(" {:>12}", "COPIED") : "";
  fmt::print("{:<60} {:>16} {:>12}  {:<8}{}  {}\n", "FILE", "BYTES", "SIZE", "ACTION", copied_header, "XET HASH");
  for (const PlannedFile& planned : report.files) {
    const std::string copied =
        to_copy > 0 ? fmt::format(" {:>12}", util::format_binary_bytes(planned.bytes_to_copy)) : "";
    fmt::print("{:<60} {:>16} {:>12}  {:<8}{}  {}\n", planned.file.path, planned.file.size,
               util::format_binary_bytes(planned.file.size),
               planned.complete  ? "present"
               : planned.replace ? "replace"
                                 : "download",
               copied, planned.file.xet_hash ? "xet:" + *planned.file.xet_hash : "");
  }
}

// What the hash check covered in this run, said of the bytes it was true of: a file found complete by an
// earlier run is trusted, not re-hashed, unless --verify asked for it.
std::string hashing_summary(const DownloadReport& report, const DownloadOptions& options) {
  const std::size_t trusted =
      options.offline ? report.files.size() : report.files_already_complete - report.files_hashed_on_disk;
  const std::size_t hashed = report.files.size() - trusted;
  std::string said;
  if (hashed > 0) {
    said = fmt::format("{} file(s) hashed in this run", hashed);
    if (report.files_hashed_on_disk > 0)
      said += fmt::format(" ({} of them read back from the disk)", report.files_hashed_on_disk);
  }
  if (trusted > 0) {
    said += fmt::format("{}{} file(s) found complete and trusted, not re-hashed (--verify hashes them)",
                        said.empty() ? "" : "; ", trusted);
  }
  return said;
}

// The closing lines: on stderr (unless -q or JSON) and in the --log-file, whatever stderr shows.
void print_summary(const DownloadReport& report, const DownloadOptions& options, const DownloadFlags& flags,
                   const std::optional<LineWriter>& log_file_writer) {
  const bool to_stderr = !flags.quiet && flags.progress != "json";
  const auto say = [&](const std::string& line) {
    if (to_stderr) std::fputs(fmt::format("{} {}\n", utc_timestamp(), line).c_str(), stderr);
    if (log_file_writer) (*log_file_writer)(line);
  };
  // The average over the whole run (listing and checks included): what a deploy log is read for afterwards.
  const double seconds = report.elapsed.count();
  const std::string rate =
      report.bytes_received > 0 && seconds > 0
          ? fmt::format(" at {}", util::format_rate(static_cast<double>(report.bytes_received) / seconds))
          : "";
  say(fmt::format("{} {} file(s), {}: {} downloaded ({}) in {:.1f}s{}, {} already complete",
                  options.offline ? "found" : "fetched", report.files.size(),
                  util::format_bytes_both(report.bytes_selected), report.files_fetched,
                  util::format_bytes_both(report.bytes_received), seconds, rate, report.files_already_complete));
  if (report.bytes_over_xet > 0 || report.bytes_copied_locally > 0) {
    say(fmt::format(
        "over Xet: {} of file bytes from {} of xorb ranges{}; over the LFS bridge: {}",
        util::format_bytes_both(report.bytes_over_xet), util::format_bytes_both(report.xorb_bytes_fetched),
        report.bytes_copied_locally > 0
            ? fmt::format(", and {} copied from files already here (chunks an earlier revision holds)",
                          util::format_bytes_both(report.bytes_copied_locally))
            : "",
        util::format_bytes_both(report.bytes_received - std::min(report.bytes_received, report.bytes_over_xet))));
  }
  if (const ConnectionTimes& t = report.connection_times; t.fetching > 0) {
    // For -v: where a slow download's time went.
    spdlog::info(
        "connections' time, summed over them: {:.1f}s on ranges (receiving {:.1f}s, writing {:.1f}s, hashing {:.1f}s, "
        "waiting for another connection of the file {:.1f}s, waiting for Xet plans {:.1f}s), {:.1f}s finishing "
        "ranges and files, {:.1f}s waiting for work",
        t.fetching, t.receiving(), t.writing, t.hashing, t.waiting_for_file, t.planning, t.finishing, t.idle);
  }
  if (report.files_repaired > 0) {
    say(fmt::format("repaired {} file(s) that failed their hash on disk", report.files_repaired));
  }
  std::string passed;
  for (const CheckResult& check : report.checks.checks) {
    if (check.status == CheckStatus::kPass) passed += (passed.empty() ? "" : ", ") + check.name;
    if (check.status == CheckStatus::kSkip && check.detail.rfind("warning: ", 0) == 0) {
      say(fmt::format("warning: {}: {}", check.name, check.detail.substr(9)));
    }
  }
  if (!passed.empty()) {
    say(fmt::format("checks passed: {} (shards {}/{}; {})", passed, report.checks.shards_present,
                    report.checks.shards_expected, hashing_summary(report, options)));
  }
}

void warn_about_legacy_flags(const DownloadFlags& flags) {
  if (flags.resume_download) {
    spdlog::warn("--resume-download is deprecated (as in huggingface_hub) and changes nothing: hfget always resumes");
  }
  if (!flags.local_dir_use_symlinks.empty()) {
    spdlog::warn(
        "--local-dir-use-symlinks is deprecated (as in huggingface_hub) and ignored: files in --local-dir "
        "are always real files");
  }
}

// The one file asked for by name (no pattern, no --include/--exclude), if that is the request: stdout then
// names that file, as `hf download` prints it, so that `cat "$(hfget download org/m config.json)"` works.
std::optional<std::string> single_named_file(const DownloadFlags& flags) {
  if (flags.files.size() != 1 || !flags.include.empty() || !flags.exclude.empty()) return std::nullopt;
  if (flags.files.front().find_first_of("*?[") != std::string::npos) return std::nullopt;
  return flags.files.front();
}

// What stdout names: that file, or the snapshot folder.
std::string result_path(const std::filesystem::path& snapshot_path, const DownloadFlags& flags) {
  const std::optional<std::string> file = single_named_file(flags);
  return file ? (snapshot_path / *file).string() : snapshot_path.string();
}

// The flags as options; a bad flag is reported like any failure, so that --json still gets its document.
DownloadOptions options_or_report(const DownloadFlags& flags, const HubEnvironment& env) {
  try {
    return to_options(flags, env);
  } catch (const Error& error) {
    if (flags.json)
      std::fputs(render_download_failure_json(error, exit_code_for(error.code()), nullptr).c_str(), stdout);
    throw;
  }
}

// The logging set-up; a --log-file that cannot be opened is not_writable, with its --json document.
std::optional<LineWriter> logging_or_report(const DownloadFlags& flags, const DownloadOptions& options) {
  try {
    return configure_logging(flags);
  } catch (const spdlog::spdlog_ex& failure) {
    const Error error(ErrorCode::kNotWritable,
                      fmt::format("{}: cannot open the log file: {}", flags.log_file, failure.what()), flags.log_file);
    if (flags.json) {
      std::fputs(render_download_failure_json(error, exit_code_for(error.code()), &options).c_str(), stdout);
    }
    throw error;
  }
}

// What a finished run prints: the plan of a dry run, or the summary and (on stdout, the result only, so that
// `path=$(hfget download ...)` works) the path or the --json document.
void print_result(const DownloadReport& report, const DownloadOptions& options, const DownloadFlags& flags,
                  const std::optional<LineWriter>& log_file_writer) {
  const std::string path = result_path(report.snapshot_path, flags);
  if (options.dry_run) {
    if (flags.json) {
      std::fputs(render_download_result_json(report, options, path).c_str(), stdout);
    } else {
      print_plan(report);
    }
    return;
  }
  print_summary(report, options, flags, log_file_writer);
  if (flags.json) {
    std::fputs(render_download_result_json(report, options, path).c_str(), stdout);
  } else {
    fmt::print("{}\n", path);
  }
  std::fflush(stdout);
}

int run_download(const DownloadFlags& flags, const RunContext& context) {
  const HubEnvironment env = HubEnvironment::from_process_environment();
  const DownloadOptions options = options_or_report(flags, env);
  const std::optional<LineWriter> log_file_writer = logging_or_report(flags, options);
  warn_about_legacy_flags(flags);
  ProgressReporter reporter(make_views(flags, options, env, log_file_writer));
  // Every failure ends the same way: the state record, the progress views, one error line, the exit code.
  const auto fail = [&](const Error& error) {
    const bool interrupted = error.code() == ErrorCode::kInterrupted;
    const int code = interrupted ? context.interrupted_exit_code() : exit_code_for(error.code());
    reporter.finish({code, interrupted ? "interrupted" : "failed", error.what(), ""});
    if (flags.progress != "json") {
      std::fprintf(stderr, "hfget: error: %s\n", error.what());
      if (interrupted) std::fputs("hfget: partial files are kept; run the same command again to resume\n", stderr);
    }
    if (flags.json) {
      std::fputs(render_download_failure_json(error, code, &options).c_str(), stdout);
      std::fflush(stdout);
    }
    spdlog::default_logger()->flush();
    return code;
  };
  try {
    const DownloadReport report = download(options, reporter, context.stop);
    reporter.finish({0, "done", "", report.snapshot_path.string()});
    print_result(report, options, flags, log_file_writer);
    return kExitSuccess;
  } catch (const Error& error) {
    return fail(error);
  } catch (const std::filesystem::filesystem_error& error) {
    return fail(error_for(error));
  } catch (const std::bad_alloc&) {
    return fail(Error(ErrorCode::kInternal, "out of memory; partial files are kept"));
  } catch (const std::exception& error) {
    return fail(Error(ErrorCode::kInternal, error.what()));
  }
}

// What to fetch and where it goes.
void add_what_and_where_options(CLI::App* command, DownloadFlags& flags) {
  command->add_option("repo_id", flags.repo_id, "Repo id, e.g. moonshotai/Kimi-K2.5")->required();
  command->add_option("files", flags.files, "Files (or fnmatch patterns) to download; default: all");
  add_revision_option(command, flags.revision, flags.revision_given);
  add_hub_options(command, flags.hub);
  add_selection_options(command, flags.include, flags.exclude);
  command->add_flag("--allow-empty", flags.allow_empty,
                    "Succeed when the selection keeps no file (default: exit 6, a pattern had a typo)");
  CLI::Option* local_dir = command->add_option("--local-dir", flags.local_dir, "Download into this directory");
  CLI::Option* cache_dir =
      command->add_option("--cache-dir", flags.cache_dir, "HF cache directory (default: HF_HUB_CACHE)");
  local_dir->excludes(cache_dir);
}

// How the bytes are fetched: parallelism, chunks, and the limits that decide when a transfer is retried.
void add_transfer_options(CLI::App* command, DownloadFlags& flags) {
  command->add_option("--max-workers", flags.max_workers, "Files downloaded at once")->capture_default_str();
  command->add_option("--connections", flags.connections,
                      "HTTP connections in all, fixed (default: adaptive, up to --max-connections)");
  command->add_option("--max-connections", flags.max_connections, "The adaptive connection count's ceiling")
      ->capture_default_str();
  command->add_option("--chunk-size", flags.chunk_size,
                      "Range size per request, e.g. 32MiB (default: adaptive, 4-64 MiB)");
  command->add_option("--retries", flags.retries, "Retries per file without progress")->capture_default_str();
  command->add_option("--stall-timeout", flags.stall_timeout_seconds, "Seconds without data before a retry")
      ->capture_default_str();
  command
      ->add_option("--speed-limit", flags.speed_limit,
                   "Retry a transfer slower than this many bytes/s over --stall-timeout (0: only stalls)")
      ->capture_default_str();
  command->add_option("--max-speed", flags.max_speed,
                      "Bytes/s for the whole download, all connections together, e.g. 200M or 1.5G (k, m, g: "
                      "powers of 1024; 0: no limit; default: HFGET_MAX_SPEED, else none)");
  command
      ->add_option("--retry-max-time", flags.retry_max_time_seconds,
                   "Seconds a file or Hub request may spend without progress, waits included (0: no limit)")
      ->capture_default_str();
  command->add_flag(
      "--no-xet", flags.no_xet,
      "Fetch Xet-stored files over the LFS bridge instead of the Xet protocol (also HF_HUB_DISABLE_XET=1)");
  command->add_flag("--no-chunk-reuse", flags.no_chunk_reuse,
                    "Over Xet, fetch every chunk, even those a file already here holds (an earlier revision "
                    "hfget fetched), instead of copying them");
}

// The progress shown while it runs.
void add_progress_options(CLI::App* command, DownloadFlags& flags) {
  command->add_option("--progress", flags.progress, "auto (terminal or log lines), lines, or json (JSON lines)")
      ->check(CLI::IsMember({"auto", "lines", "json"}))
      ->capture_default_str();
  command
      ->add_option("--progress-interval", flags.progress_interval_seconds,
                   "Seconds between progress lines when stderr is not a terminal")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  command->add_option("--log-file", flags.log_file, "Also write progress and diagnostics to this file");
}

// How much is said, and in which form the result is printed.
void add_verbosity_options(CLI::App* command, DownloadFlags& flags) {
  command->add_flag("-q,--quiet", flags.quiet, "No progress; errors only on stderr");
  command->add_flag("-v,--verbose", flags.verbose, "Log every request (tokens are never printed)");
  command->add_flag("--json", flags.json,
                    "Print one JSON document on stdout at the end (path, commit, files, bytes, checks)");
}

// How the run behaves: in the background, against a lock or a small disk, as a rehearsal, or as a repair.
void add_run_options(CLI::App* command, DownloadFlags& flags) {
  command->add_flag("--detach", flags.detach, "Run in the background (survives the end of the SSH session)");
  command->add_flag("--no-space-check", flags.no_space_check, "Start even if the free space looks too small");
  command->add_flag("--no-wait", flags.no_wait,
                    "Fail (exit 10) instead of waiting when another hfget holds the target");
  command->add_flag("--dry-run", flags.dry_run, "Print what would be downloaded, write nothing");
  CLI::Option* force = command->add_flag("--force-download", flags.force_download,
                                         "Download every selected file again, even if already complete");
  command
      ->add_flag("--verify", flags.verify_present,
                 "Hash the files already on disk and download again exactly those that fail (repair)")
      ->excludes(force);
}

void add_legacy_options(CLI::App* command, DownloadFlags& flags) {
  CLI::Option_group* legacy = command->add_option_group("Accepted for `hf download` scripts, no effect");
  legacy->add_flag("--resume-download", flags.resume_download, "Deprecated: hfget always resumes");
  legacy->add_option("--local-dir-use-symlinks", flags.local_dir_use_symlinks,
                     "Deprecated: --local-dir holds real files");
}

// --detach: checked here, before anything is written, a typo in the repo id or the revision, or a token
// without access, fails now with its exit code (3, 4, 5, 7) rather than later in the log. Returns the
// launcher's exit code, or nothing in the daemon, which goes on to run the download.
std::optional<int> detach(DownloadFlags& flags) {
  const DownloadOptions options = to_options(flags, HubEnvironment::from_process_environment());
  if (flags.quiet) spdlog::set_level(spdlog::level::err);  // retry notices of the checks, as without --detach
  // libcurl is set up for the checks alone and cleaned up before the fork, which the daemon's own set-up
  // then repeats.
  std::filesystem::path snapshot_path;
  {
    const LibraryInit library;
    snapshot_path = check_download_source(options, std::stop_token{});
  }
  const Target target = options.target();
  const std::filesystem::path state_dir = target.prepare_state_dir();
  // Refused now rather than in the background, where only the log would say so.
  if (!options.wait_for_lock) {
    if (const std::optional<long> holder = target.lock_holder()) {
      throw Error(ErrorCode::kBusy, fmt::format("another hfget (PID {}) is downloading into this target; wait for it "
                                                "(hfget wait), or run without --no-wait to queue behind it",
                                                *holder));
    }
  }
  const std::filesystem::path log =
      flags.log_file.empty() ? state_dir / "download.log" : std::filesystem::absolute(flags.log_file);
  std::optional<int> launcher_exit =
      detach_into_background(log, state_dir, {result_path(snapshot_path, flags), flags.quiet});
  // In the daemon, stderr is the log: no second file sink on the same file.
  flags.log_file.clear();
  return launcher_exit;
}

}  // namespace

DownloadCommand add_download_command(CLI::App& app) {
  auto flags = std::make_shared<DownloadFlags>();
  CLI::App* command = &app;  // the subcommand, made from its row in cli/command_table.cpp
  add_what_and_where_options(command, *flags);
  add_transfer_options(command, *flags);
  add_progress_options(command, *flags);
  add_run_options(command, *flags);
  add_verbosity_options(command, *flags);
  add_legacy_options(command, *flags);

  DownloadCommand result;
  result.detach_if_requested = [command, flags]() -> std::optional<int> {
    if (!command->parsed() || !flags->detach || flags->dry_run) return std::nullopt;
    return detach(*flags);
  };
  result.run = [command, flags](const RunContext& context) -> int {
    if (!command->parsed()) return -1;
    return run_download(*flags, context);
  };
  return result;
}

}  // namespace hfget::cli
