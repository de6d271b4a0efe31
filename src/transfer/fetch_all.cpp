// SPDX-License-Identifier: MIT
#include "transfer/fetch_all.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>

#include "transfer/bridge_source.hpp"
#include "transfer/chunk_size.hpp"
#include "transfer/download_steps.hpp"
#include "transfer/local_chunks.hpp"
#include "transfer/rate_limiter.hpp"
#include "transfer/stage_clock.hpp"
#include "transfer/xet_source.hpp"

namespace hfget::transfer {
namespace {

// The whole download stops at once for a full disk, or for an error that is not a file's own.
class StopAll {
 public:
  explicit StopAll(std::stop_source& stop) : stop_(stop) {}
  void because(const Error& cause) {
    const std::lock_guard guard(mutex_);
    if (!cause_) cause_ = cause;
    stop_.request_stop();
  }
  std::optional<Error> cause() const {
    const std::lock_guard guard(mutex_);
    return cause_;
  }

 private:
  std::stop_source& stop_;
  mutable std::mutex mutex_;
  std::optional<Error> cause_;
};

// Fetches one task on `connection`; returns the error that ended it, naming the repo file (not only the
// partial file or blob underneath it).
std::optional<Error> fetch_one(SourceConnection& connection, RangeTask& task, StopAll& stop_all) {
  const std::string& path = task.file->remote().path;
  try {
    connection.fetch(task);
  } catch (const Error& error) {
    const std::string what = error.what();
    Error failure = what.rfind(path + ":", 0) == 0 || error.code() == ErrorCode::kInterrupted
                        ? error
                        : Error(error.code(), path + ": " + what, path);
    if (error.code() == ErrorCode::kDiskFull) stop_all.because(failure);
    return failure;
  } catch (const std::exception& error) {
    return Error(ErrorCode::kInternal, fmt::format("{}: {}", path, error.what()), path);
  }
  return std::nullopt;
}

// Nothing may leave a thread (std::terminate: no error line, no state record): what escapes the per-range
// handling (memory exhausted while opening a file, say) stops the whole download with that cause.
void serve(ByteSource& source, ChunkScheduler& scheduler, std::size_t number, const std::stop_token& stop,
           StopAll& stop_all, StageClock* clock) {
  try {
    const std::unique_ptr<SourceConnection> connection = source.open_connection(stop);
    while (true) {
      RangeTask* task = nullptr;
      {
        const StageTimer idle(clock, &StageClock::idle_ns);
        task = scheduler.next(number);
      }
      if (task == nullptr) break;
      std::optional<Error> error;
      {
        const StageTimer fetching(clock, &StageClock::fetching_ns);
        error = fetch_one(*connection, *task, stop_all);
      }
      const StageTimer finishing(clock, &StageClock::finishing_ns);
      scheduler.done(task, error);
    }
  } catch (const Error& error) {
    stop_all.because(error);
  } catch (const std::exception& error) {
    stop_all.because(Error(ErrorCode::kInternal, fmt::format("a download connection failed: {}", error.what())));
  }
}

// The files still to fetch (their indexes in the plan), each with its incoming file and source state.
std::vector<ScheduledFile> files_to_fetch(const std::vector<PlannedFile>& plan, const FetchSettings& settings,
                                          ByteSource& source, store::Layout& layout, ProgressSink& progress,
                                          std::vector<std::size_t>& todo) {
  std::vector<ScheduledFile> files;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].complete) continue;
    todo.push_back(i);
    IncomingFileSettings file_settings = settings.file;
    file_settings.clock = settings.clock;
    file_settings.replace_existing = plan[i].replace || settings.force_download;
    files.push_back({std::make_unique<IncomingFile>(plan[i].file, layout, progress, file_settings),
                     source.open_file(plan[i].file)});
  }
  return files;
}

// What a stopped download says of the files it cut short. Stopped by a signal: files never started carry
// no error of their own, the run was interrupted. Stopped because the disk filled: what the stop cut short
// failed for that reason, not a signal. Stopped by an error that is not a file's own (memory, say): every
// file it cut short fails with it. A file published before the stop is done, whatever stopped the others.
void blame_the_stop(const std::vector<PlannedFile>& plan, const std::vector<std::size_t>& todo,
                    const std::vector<bool>& fetched, bool by_signal, FetchResults& results) {
  for (std::size_t k = 0; k < todo.size(); ++k) {
    if (fetched[k]) continue;
    const std::size_t index = todo[k];
    std::optional<Error>& error = results.errors[index];
    const std::string& path = plan[index].file.path;
    if (by_signal && !error) error = Error(ErrorCode::kInterrupted, "interrupted");
    if (!by_signal && (!error || error->code() == ErrorCode::kInterrupted)) {
      const bool disk_full = !results.stop_cause || results.stop_cause->code() == ErrorCode::kDiskFull;
      error = disk_full ? Error(ErrorCode::kDiskFull, path + ": not downloaded: the disk is full", path)
                        : Error(results.stop_cause->code(),
                                fmt::format("{}: not downloaded: {}", path, results.stop_cause->what()), path);
    }
  }
}

// How many ranges the plan is cut into at first: more connections than that would start with nothing to do.
std::size_t ranges_to_fetch(const std::vector<PlannedFile>& plan, std::uint64_t chunk_bytes) {
  std::size_t ranges = 0;
  for (const PlannedFile& planned : plan) {
    if (!planned.complete) ranges += static_cast<std::size_t>((planned.file.size + chunk_bytes - 1) / chunk_bytes);
  }
  return std::max<std::size_t>(ranges, 1);
}

}  // namespace

FetchResults fetch_files(const std::vector<PlannedFile>& plan, const FetchSettings& settings, ByteSource& source,
                         store::Layout& layout, const PublishStep& publish, ProgressSink& progress,
                         std::stop_token outer_stop) {
  std::vector<std::size_t> todo;
  std::vector<ScheduledFile> files = files_to_fetch(plan, settings, source, layout, progress, todo);
  FetchResults results;
  results.errors.resize(plan.size());
  if (todo.empty()) return results;

  // Disk full stops every connection at once; SIGINT arrives through outer_stop.
  std::stop_source stop;
  const std::stop_callback forward(outer_stop, [&] { stop.request_stop(); });
  StopAll stop_all(stop);
  ChunkScheduler scheduler(std::move(files), settings.chunks, publish, stop.get_token());
  {
    ConnectionPool pool(scheduler, [&](std::size_t number) {
      serve(source, scheduler, number, stop.get_token(), stop_all, settings.clock);
    });
    // Declared after the pool: the sampler stops before the pool it steers is destroyed.
    std::optional<ConnectionSteering> steering;
    if (settings.steering) {
      steering.emplace(pool, scheduler, progress, *settings.steering);
    } else {
      pool.set_connections(settings.connections);
      progress.on_connections(std::max<std::size_t>(settings.connections, 1), "fixed by --connections");
    }
    if (settings.on_started) settings.on_started(pool);
    pool.join();
  }
  results.stop_cause = stop_all.cause();
  const std::vector<std::optional<Error>> errors = scheduler.errors();
  for (std::size_t k = 0; k < todo.size(); ++k) {
    results.errors[todo[k]] = errors[k];
    if (errors[k] && errors[k]->code() != ErrorCode::kInterrupted) {
      progress.on_file_failed(plan[todo[k]].file, *errors[k]);
    }
  }
  if (stop.stop_requested()) {
    blame_the_stop(plan, todo, scheduler.fetched(), outer_stop.stop_requested() && !results.stop_cause, results);
  }
  results.bytes_received = scheduler.bytes_received();
  results.files_fetched = scheduler.files_fetched();
  return results;
}

FetchResults fetch_all(const std::vector<PlannedFile>& plan, const DownloadOptions& options, const std::string& commit,
                       std::uint64_t bytes_to_fetch, store::Layout& layout, const PublishStep& publish,
                       http::Transport& hub_transport, const http::TransportFactory& make_transport,
                       ProgressSink& progress, std::stop_token outer_stop) {
  const HubConnection& hub = options.hub;
  // --max-speed: one limiter shared by every connection; without it, none at all (no cost per byte).
  std::optional<RateLimiter> rate_limiter;
  if (options.max_bytes_per_second > 0) rate_limiter.emplace(options.max_bytes_per_second);
  const BridgeSettings bridge{hub.endpoint,
                              &hub.token,
                              options.repo,
                              commit,
                              hub.max_attempts,
                              hub.retry_base_delay,
                              hub.retry_max_time,
                              nullptr,
                              rate_limiter ? &*rate_limiter : nullptr};
  XetSettings xet{open_xet_tokens(plan, options, commit, hub_transport, outer_stop),
                  hub.max_attempts,
                  hub.retry_base_delay,
                  hub.retry_max_time,
                  rate_limiter ? &*rate_limiter : nullptr,
                  layout.state_dir()};
  StageClock clock;
  xet.clock = &clock;
  // What the files already here hold (an earlier revision's, with the records hfget wrote when it fetched
  // them): read once, before any file of this download is published.
  LocalChunks local_chunks;
  // --force-download means every byte fetched again: nothing is copied, not even from other files.
  if (xet.tokens != nullptr && options.reuse_chunks && !options.force_download) {
    local_chunks.add_from_target(layout, plan);
    if (!local_chunks.empty()) {
      spdlog::info("Xet: {} file(s) already here have chunk records; the chunks they hold are copied, not fetched",
                   local_chunks.files());
    }
    xet.local_chunks = &local_chunks;
    xet.target = &layout;
  }
  XetSource source(xet, bridge, transport_settings(options), make_transport, progress);
  FetchSettings settings;
  const std::uint64_t chunk_bytes = chunk_size_for(options, plan, bytes_to_fetch);
  // Under a low --max-speed, connections past what the limit can feed would be slowed into stall timeouts:
  // that caps a fixed count and the adaptive count's ceiling alike.
  const std::size_t most = RateLimiter::connections_for(
      options.max_bytes_per_second, static_cast<std::size_t>(options.connections.value_or(options.max_connections)),
      std::max<std::uint64_t>(RateLimiter::kMinBytesPerConnection, 2 * hub.speed_limit));
  if (options.connections) {
    settings.connections = most;
  } else {
    settings.steering = SteeringSettings{};
    settings.steering->controller.ceiling = most;
    settings.steering->controller.ranges_available = ranges_to_fetch(plan, chunk_bytes);
  }
  // A split costs what the server already sent past the middle (up to a socket buffer, MBs on a fast
  // link): only ranges with at least half a chunk (and 4 MiB) left are worth splitting.
  settings.chunks = {static_cast<std::size_t>(options.max_workers), chunk_bytes,
                     std::max<std::uint64_t>(chunk_bytes / 4, 2 << 20), tail_size_for(options, chunk_bytes)};
  settings.force_download = options.force_download;
  settings.file = IncomingFileSettings{false, hub.max_attempts, hub.retry_base_delay};
  settings.clock = &clock;
  FetchResults results = fetch_files(plan, settings, source, layout, publish, progress, std::move(outer_stop));
  results.bytes_over_xet = source.shared().bytes_stored;
  results.xorb_bytes_fetched = source.shared().bytes_fetched;
  results.bytes_copied = source.shared().bytes_copied;
  if (source.shared().plans_asked > 0) {
    const ReconstructionPrefetch::Takes takes = source.plan_takes();
    spdlog::debug(
        "Xet: {} reconstructions asked, {} of them ahead of their ranges and used; ranges found their plan ready {}, "
        "being asked {}, queued {}, not asked {}; connections waited {:.0f} ms for plans being asked, {:.0f} ms "
        "asking {} plans themselves for their first range and {:.0f} ms asking {} for others",
        source.shared().plans_asked.load(), takes.used, takes.ready, takes.waited, takes.queued, takes.missing,
        static_cast<double>(takes.waited_ns) / 1e6, static_cast<double>(source.shared().first_ask_ns.load()) / 1e6,
        source.shared().first_asks.load(), static_cast<double>(source.shared().later_ask_ns.load()) / 1e6,
        source.shared().later_asks.load());
  }
  results.connection_times = clock.seconds();
  return results;
}

}  // namespace hfget::transfer
