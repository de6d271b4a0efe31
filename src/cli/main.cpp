// SPDX-License-Identifier: MIT
// hfget's entry point: parse the command line, run one command, map the outcome to an exit code.
// An hfget::Error is caught here and in the download workers, nowhere else.
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>

#include "cli/download_command.hpp"
#include "cli/exit_code.hpp"
#include "cli/signals.hpp"
#include "cli/verify_command.hpp"
#include "hfget/error.hpp"
#include "hfget/library.hpp"

namespace {

void configure_logging() {
  auto logger = spdlog::stderr_logger_mt("hfget");
  logger->set_pattern("%Y-%m-%dT%H:%M:%SZ %l %v", spdlog::pattern_time_type::utc);
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::warn);
}

int run(int argc, char** argv) {
  hfget::cli::SignalWatcher signals;  // first: blocks SIGINT/SIGTERM in every thread started after it
  const hfget::LibraryInit library;
  configure_logging();

  CLI::App app{"hfget: fetch a model repository from the Hugging Face Hub and prove it arrived whole"};
  app.set_version_flag("--version", hfget::version_string());
  app.require_subcommand(1);
  const auto download = hfget::cli::add_download_command(app);
  const auto verify = hfget::cli::add_verify_command(app);
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

  try {
    if (const int code = download(signals.stop_token()); code >= 0) return code;
    return verify(signals.stop_token());
  } catch (const hfget::Error& error) {
    std::fprintf(stderr, "hfget: error: %s\n", error.what());
    if (error.code() == hfget::ErrorCode::kInterrupted) {
      std::fprintf(stderr, "hfget: partial files are kept; run the same command again to resume\n");
      return signals.received_signal() == SIGTERM ? 143 : 130;
    }
    return hfget::cli::exit_code_for(error.code());
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "hfget: internal error: %s\n", error.what());
    return hfget::cli::exit_code_for(hfget::ErrorCode::kInternal);
  }
}
