// SPDX-License-Identifier: MIT
// hfget's entry point: parse the command line, detach if asked (before any thread exists), then run one
// command and map the outcome to an exit code. An hfget::Error is caught here, in the download command
// (to record the outcome in the state file first) and in the download workers; nowhere else.
#include <malloc.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>

#include "cli/cache_commands.hpp"
#include "cli/download_command.hpp"
#include "cli/exit_code.hpp"
#include "cli/ls_command.hpp"
#include "cli/printable_log_formatter.hpp"
#include "cli/signals.hpp"
#include "cli/status_command.hpp"
#include "cli/verify_command.hpp"
#include "hfget/error.hpp"
#include "hfget/library.hpp"

namespace {

void configure_default_logging() {
  auto logger = spdlog::stderr_logger_mt("hfget-cli");
  logger->set_formatter(std::make_unique<hfget::cli::PrintableLogFormatter>("%Y-%m-%dT%H:%M:%SZ %l %v"));
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::warn);
}

int run(int argc, char** argv) {
  CLI::App app{"hfget: fetch a model repository from the Hugging Face Hub and prove it arrived whole"};
  app.set_version_flag("--version", hfget::version_string());
  app.require_subcommand(1);
  const hfget::cli::DownloadCommand download = hfget::cli::add_download_command(app);
  const std::vector<std::function<int(const hfget::cli::RunContext&)>> commands{download.run,
                                                                                hfget::cli::add_verify_command(app),
                                                                                hfget::cli::add_status_command(app),
                                                                                hfget::cli::add_wait_command(app),
                                                                                hfget::cli::add_ls_command(app),
                                                                                hfget::cli::add_cache_command(app),
                                                                                hfget::cli::add_rm_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return hfget::cli::exit_code_for(hfget::ErrorCode::kUsage);
  }

  configure_default_logging();
  // --detach forks here, while the process is still single-threaded; the launcher returns at once.
  if (const std::optional<int> launcher_exit = download.detach_if_requested()) return *launcher_exit;

  hfget::cli::SignalWatcher signals;  // blocks SIGINT/SIGTERM in every thread started after it
  const hfget::LibraryInit library;
  const hfget::cli::RunContext context{signals.stop_token(),
                                       [&signals] { return signals.received_signal() == SIGTERM ? 143 : 130; }};
  for (const auto& command : commands) {
    if (const int code = command(context); code >= 0) return code;
  }
  return hfget::cli::exit_code_for(hfget::ErrorCode::kUsage);
}

// Memory stays bounded by design (a fixed number of buffers), but glibc's defaults would hide that: every
// connection thread gets its own malloc arena that keeps what it freed, and after the first large buffer is
// freed the mmap threshold rises so later large buffers come from those arenas and stay resident. Fixed
// settings give freed buffers back to the system (peak RSS of a 64-shard download: docs/benchmarks.md).
void bound_heap_growth() {
  ::mallopt(M_ARENA_MAX, 2);
  ::mallopt(M_MMAP_THRESHOLD, 256 * 1024);
}

}  // namespace

int main(int argc, char** argv) {
  bound_heap_growth();
  try {
    return run(argc, argv);
  } catch (const hfget::Error& error) {
    std::fprintf(stderr, "hfget: error: %s\n", error.what());
    return hfget::cli::exit_code_for(error.code());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "hfget: internal error: %s\n", error.what());
    return hfget::cli::exit_code_for(hfget::ErrorCode::kInternal);
  }
}
