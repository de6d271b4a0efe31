// SPDX-License-Identifier: MIT
// hfget's entry point: build the commands from their table (cli/command_table.cpp), parse the command line,
// detach if asked (before any thread exists), then run the one command and map the outcome to an exit code. An
// hfget::Error is caught here, in the download command (to record the outcome in the state file first) and in the
// download workers; nowhere else.
#include <malloc.h>
#include <poll.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "cli/command_suggestion.hpp"
#include "cli/command_table.hpp"
#include "cli/exit_code.hpp"
#include "cli/printable_log_formatter.hpp"
#include "cli/signals.hpp"
#include "cli/version.hpp"
#include "hfget/error.hpp"
#include "hfget/library.hpp"
#include "util/descriptor_table.hpp"

namespace {

void configure_default_logging() {
  auto logger = spdlog::stderr_logger_mt("hfget-cli");
  logger->set_formatter(std::make_unique<hfget::cli::PrintableLogFormatter>("%Y-%m-%dT%H:%M:%SZ %l %v"));
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::warn);
}

constexpr const char* kHelpHint = "run 'hfget --help' for the commands, 'hfget COMMAND --help' for their flags";

// The word a user typed where a command belongs, if it is none of them (CLI11 would call it an extra
// argument, after "A subcommand is required").
std::optional<std::string> unknown_command(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::vector<std::string> names = hfget::cli::command_names(hfget::cli::hfget_commands());
  if (std::find(names.begin(), names.end(), argv[1]) != names.end()) return std::nullopt;
  const std::vector<std::string> internal = hfget::cli::command_names(hfget::cli::internal_commands());
  if (std::find(internal.begin(), internal.end(), argv[1]) != internal.end()) return std::nullopt;
  return std::string(argv[1]);
}

int refuse_unknown_command(const std::string& typed) {
  const std::optional<std::string> near =
      hfget::cli::closest_match(typed, hfget::cli::command_names(hfget::cli::hfget_commands()));
  std::fprintf(stderr, "hfget: error: unknown command '%s'%s\n%s\n", hfget::detail::printable_message(typed).c_str(),
               near ? ("; did you mean '" + *near + "'?").c_str() : "", kHelpHint);
  return hfget::cli::exit_code_for(hfget::ErrorCode::kUsage);
}

// The long flags `scope` knows, "--include" and the like.
void add_flag_names(const CLI::App& scope, std::vector<std::string>& known) {
  for (const CLI::Option* option : scope.get_options()) {
    for (const std::string& name : option->get_lnames()) known.push_back("--" + name);
  }
}

// "did you mean --include?" for each --flag the command does not know.
std::string flag_suggestions(const CLI::App& app, const std::vector<hfget::cli::AddedCommand>& commands, int argc,
                             char** argv) {
  std::vector<std::string> known;
  add_flag_names(app, known);
  for (const hfget::cli::AddedCommand& command : commands) {
    if (argc >= 2 && command.app->get_name() == argv[1]) add_flag_names(*command.app, known);
  }
  std::string out;
  for (int i = 2; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "--") break;
    if (!word.starts_with("--")) continue;
    const std::string flag(word.substr(0, word.find('=')));
    if (std::find(known.begin(), known.end(), flag) != known.end()) continue;
    if (const std::optional<std::string> near = hfget::cli::closest_match(flag, known)) {
      out += "hfget: unknown flag " + flag + "; did you mean " + *near + "?\n";
    }
  }
  return out;
}

// A pipe whose reading end is closed polls as an error for writing: what EPIPE said, when its errno is lost.
bool stdout_reader_is_gone() {
  pollfd out{STDOUT_FILENO, POLLOUT, 0};
  return ::poll(&out, 1, 0) == 1 && (out.revents & POLLERR) != 0;
}

// What a command printed may still sit in stdio's buffer: a reader that went away, or a full disk under
// `> file`, shows only when it is flushed, and must not pass for success.
int with_stdout_flushed(int code) {
  const bool failed_before = std::ferror(stdout) != 0;  // an fputs that failed earlier, its errno long gone
  errno = 0;
  if (std::fflush(stdout) == 0 && !failed_before) return code;
  const int cause = errno;
  if (cause == EPIPE || (cause == 0 && stdout_reader_is_gone())) return hfget::cli::kExitBrokenPipe;
  std::fprintf(stderr, "hfget: error: cannot write to stdout%s%s\n", cause != 0 ? ": " : "",
               cause != 0 ? std::strerror(cause) : "");
  return code == hfget::cli::kExitSuccess ? hfget::cli::exit_code_for(hfget::ErrorCode::kInternal) : code;
}

void describe_app(CLI::App& app) {
  app.set_version_flag(
      "-V,--version", [] { return hfget::cli::version_text(hfget::cli::version_info()); },
      "Print the version, the commit it was built from, and the libcurl and OpenSSL in use");
  app.require_subcommand(1);
  // CLI11's own errors get the prefix every hfget error line has, so a log grep for "hfget: error:" finds all.
  app.failure_message([](const CLI::App*, const CLI::Error& error) {
    return std::string("hfget: error: ") + error.what() + "\n" + kHelpHint + "\n";
  });
}

// The exit code when parsing ends the run (--help, --version, a usage error); nullopt to go on.
std::optional<int> parse(CLI::App& app, const std::vector<hfget::cli::AddedCommand>& commands, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fputs(flag_suggestions(app, commands, argc, argv).c_str(), stderr);
    app.exit(e);
    return hfget::cli::exit_code_for(hfget::ErrorCode::kUsage);
  }
}

int run_command(const hfget::cli::Command& command) {
  // --detach forks here, while the process is still single-threaded; the launcher returns at once.
  if (command.before_threads) {
    if (const std::optional<int> launcher_exit = command.before_threads()) return *launcher_exit;
  }
  hfget::cli::SignalWatcher signals;  // blocks SIGINT/SIGTERM in every thread started after it
  const hfget::LibraryInit library;
  const hfget::cli::RunContext context{signals.stop_token(),
                                       [&signals] { return signals.received_signal() == SIGTERM ? 143 : 130; }};
  if (const int code = command.run(context); code >= 0) return with_stdout_flushed(code);
  return hfget::cli::exit_code_for(hfget::ErrorCode::kUsage);
}

int run(int argc, char** argv) {
  CLI::App app{"hfget: fetch a model repository from the Hugging Face Hub and prove it arrived whole"};
  describe_app(app);
  std::vector<hfget::cli::AddedCommand> commands = hfget::cli::add_subcommands(app, hfget::cli::hfget_commands());
  for (hfget::cli::AddedCommand& internal : hfget::cli::add_subcommands(app, hfget::cli::internal_commands())) {
    internal.app->group("");  // hidden from --help, "did you mean" and the man page
    commands.push_back(std::move(internal));
  }
  if (argc == 1) {  // nothing to do: say what can be done, as `hf` and `git` do
    std::fputs(app.help().c_str(), stdout);
    return hfget::cli::kExitSuccess;
  }
  if (const std::optional<std::string> typed = unknown_command(argc, argv)) return refuse_unknown_command(*typed);
  if (const std::optional<int> code = parse(app, commands, argc, argv)) return *code;
  configure_default_logging();
  const hfget::cli::AddedCommand* parsed = hfget::cli::parsed_command(commands);
  return parsed ? run_command(parsed->command) : hfget::cli::exit_code_for(hfget::ErrorCode::kUsage);
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
  hfget::util::reserve_descriptor_table();  // before any thread starts: see there
  try {
    return run(argc, argv);
  } catch (const hfget::Error& error) {
    std::fprintf(stderr, "hfget: error: %s\n", error.what());
    return hfget::cli::exit_code_for(error.code());
  } catch (const std::filesystem::filesystem_error& failure) {
    const hfget::Error error = hfget::error_for(failure);
    std::fprintf(stderr, "hfget: error: %s\n", error.what());
    return hfget::cli::exit_code_for(error.code());
  } catch (const std::system_error& error) {
    // `hfget ls | head`: the reader has gone, and wants nothing more, not even an error line. 141 is what a
    // shell reports for a writer that SIGPIPE ended (hfget ignores SIGPIPE for its sockets' sake).
    if (error.code() == std::errc::broken_pipe) return hfget::cli::kExitBrokenPipe;
    std::fprintf(stderr, "hfget: internal error: %s\n", error.what());
    return hfget::cli::exit_code_for(hfget::ErrorCode::kInternal);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "hfget: internal error: %s\n", error.what());
    return hfget::cli::exit_code_for(hfget::ErrorCode::kInternal);
  }
}
