// SPDX-License-Identifier: MIT
#include "transfer/fetch_all.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <thread>

#include "transfer/chunk_scheduler.hpp"
#include "transfer/chunk_size.hpp"
#include "transfer/download_steps.hpp"
#include "transfer/file_job.hpp"
#include "transfer/hub_quota.hpp"
#include "transfer/range_fetcher.hpp"

namespace hfget::transfer {

FetchResults fetch_all(const std::vector<PlannedFile>& plan, const DownloadOptions& options, const std::string& commit,
                       std::uint64_t bytes_to_fetch, store::Layout& layout, ProgressSink& progress,
                       std::stop_token outer_stop) {
  std::vector<std::size_t> todo;
  std::vector<std::unique_ptr<transfer::FileJob>> jobs;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].complete) continue;
    todo.push_back(i);
    jobs.push_back(
        std::make_unique<transfer::FileJob>(plan[i].file, layout, progress,
                                            FileJobSettings{plan[i].replace || options.force_download,
                                                            options.hub.max_attempts, options.hub.retry_base_delay}));
  }
  FetchResults results;
  results.errors.resize(plan.size());
  if (todo.empty()) return results;

  // Disk full stops every connection at once; SIGINT arrives through outer_stop.
  std::stop_source stop;
  const std::stop_callback forward(outer_stop, [&] { stop.request_stop(); });
  const std::uint64_t chunk_bytes = chunk_size_for(options, plan, bytes_to_fetch);
  // A split costs what the server already sent past the middle (up to a socket buffer, MBs on a fast
  // link): only ranges with at least half a chunk (and 4 MiB) left are worth splitting.
  transfer::ChunkScheduler scheduler(
      std::move(jobs),
      {static_cast<std::size_t>(options.max_workers), chunk_bytes, std::max<std::uint64_t>(chunk_bytes / 4, 2 << 20)},
      stop.get_token());
  transfer::HubQuota hub_quota;
  const transfer::FetchSettings settings{
      options.hub.endpoint,         &options.hub.token,         options.repo, commit, options.hub.max_attempts,
      options.hub.retry_base_delay, options.hub.retry_max_time, &hub_quota};
  std::mutex stop_cause_mutex;
  const auto stop_everything = [&](const Error& cause) {
    const std::lock_guard guard(stop_cause_mutex);
    if (!results.stop_cause) results.stop_cause = cause;
    stop.request_stop();
  };
  const auto serve_ranges = [&] {
    transfer::RangeFetcher fetcher(settings, progress, transport_settings(options), stop.get_token());
    while (transfer::RangeTask* task = scheduler.next()) {
      std::optional<Error> failure;
      try {
        fetcher.fetch(*task);
      } catch (const Error& error) {
        // Name the repo file, not only the partial file or blob underneath it.
        const std::string& path = task->job->file().path;
        const std::string what = error.what();
        failure = what.rfind(path + ":", 0) == 0 || error.code() == ErrorCode::kInterrupted
                      ? error
                      : Error(error.code(), path + ": " + what, path);
        if (error.code() == ErrorCode::kDiskFull) stop_everything(*failure);
      } catch (const std::exception& error) {
        failure = Error(ErrorCode::kInternal, fmt::format("{}: {}", task->job->file().path, error.what()),
                        task->job->file().path);
      }
      scheduler.done(task, failure);
    }
  };
  // Nothing may leave a thread (std::terminate: no error line, no state record): what escapes the per-range
  // handling above (memory exhausted while opening a file, say) stops the whole download with that cause.
  const auto connection = [&] {
    try {
      serve_ranges();
    } catch (const Error& error) {
      stop_everything(error);
    } catch (const std::exception& error) {
      stop_everything(Error(ErrorCode::kInternal, fmt::format("a download connection failed: {}", error.what())));
    }
  };
  {
    const auto count = static_cast<std::size_t>(options.connections);
    std::vector<std::jthread> connections;
    connections.reserve(count);
    for (std::size_t i = 0; i < count; ++i) connections.emplace_back(connection);
    for (std::jthread& thread : connections) thread.join();
  }
  const std::vector<std::optional<Error>> errors = scheduler.errors();
  const std::vector<bool> fetched = scheduler.fetched();
  for (std::size_t k = 0; k < todo.size(); ++k) {
    results.errors[todo[k]] = errors[k];
    if (errors[k] && errors[k]->code() != ErrorCode::kInterrupted)
      progress.on_file_failed(plan[todo[k]].file, *errors[k]);
  }
  if (stop.stop_requested()) {
    // Stopped by a signal: files never started carry no error of their own, the run was interrupted.
    // Stopped because the disk filled: what the stop cut short failed for that reason, not a signal.
    // Stopped by an error that is not a file's own (memory, say): every file it cut short fails with it.
    // A file published before the stop is done, whatever stopped the others.
    const bool by_signal = outer_stop.stop_requested() && !results.stop_cause;
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
  results.bytes_received = scheduler.bytes_received();
  results.files_fetched = scheduler.files_fetched();
  return results;
}

}  // namespace hfget::transfer
