// SPDX-License-Identifier: MIT
#include "cli/state_file.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "cli/progress_views.hpp"
#include "util/atomic_file.hpp"
#include "util/process_owner.hpp"
#include "util/read_text_file.hpp"
#include "util/reserved_record_file.hpp"

namespace hfget::cli {
namespace {

// The files in flight the record names (those with the most left first); the rest are only counted, so that
// the record stays within its reserved size.
constexpr std::size_t kInFlightNamed = 10;
constexpr std::size_t kRecordedPathChars = 512;
constexpr std::size_t kRecordedErrorChars = 4096;

std::optional<nlohmann::json> read_json(const std::filesystem::path& path) {
  // A reader that opened the record just before a rewrite exchanged it may read the spare being overwritten:
  // a torn read does not parse, and the next read finds the new record.
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::optional<std::string> text = util::read_text_file(path, 1 << 20);
    if (!text) return std::nullopt;
    nlohmann::json data = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!data.is_discarded() && data.is_object()) return data;
  }
  return std::nullopt;
}

std::string clipped(const std::string& text, std::size_t max_chars) {
  return text.size() <= max_chars ? text : text.substr(0, max_chars) + "...";
}

nlohmann::json in_flight_record(const ProgressSnapshot& snapshot) {
  std::vector<ActiveFile> files = snapshot.active;
  std::stable_sort(files.begin(), files.end(), [](const ActiveFile& a, const ActiveFile& b) {
    return a.size - std::min(a.size, a.done) > b.size - std::min(b.size, b.done);
  });
  nlohmann::json named = nlohmann::json::array();
  for (std::size_t i = 0; i < files.size() && i < kInFlightNamed; ++i) {
    named.push_back({{"path", clipped(files[i].path, kRecordedPathChars)},
                     {"size", files[i].size},
                     {"bytes_done", std::min(files[i].done, files[i].size)}});
  }
  return named;
}

std::string dumped(const nlohmann::json& data) {
  return data.dump(1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace) + "\n";
}

// The record as text that fits the reserved space: past it the write would need new space, which a full disk
// does not have. Budgets per field are counted in characters, but a repo's paths are hostile and may be all
// emoji, which ensure_ascii writes as 12 bytes each: shed the named files in flight, then shorten the texts.
std::string fitted(nlohmann::json& data, std::size_t capacity) {
  std::string text = dumped(data);
  nlohmann::json& in_flight = data["in_flight"];
  while (text.size() >= capacity && in_flight.is_array() && !in_flight.empty()) {
    in_flight.erase(in_flight.size() - 1);
    text = dumped(data);
  }
  for (const char* field : {"last_error", "target", "log_file", "repo", "revision", "commit"}) {
    if (text.size() < capacity) break;
    const auto value = data.find(field);
    if (value != data.end() && value->is_string()) *value = clipped(value->get<std::string>(), 64);
    text = dumped(data);
  }
  return text;
}

class StateFileView final : public ProgressView {
 public:
  StateFileView(std::filesystem::path path, std::string repo, std::string revision, std::string target,
                std::string log_file, bool detached)
      : detached_(detached),
        record_(std::move(path)),
        repo_(std::move(repo)),
        revision_(std::move(revision)),
        target_(std::move(target)),
        log_file_(std::move(log_file)),
        started_at_(utc_timestamp()) {}

  std::chrono::milliseconds period() const override { return std::chrono::seconds(2); }

  // Only a download that holds the target lock (it has planned) writes the state: a run queued behind
  // another must not overwrite that one's state.
  void tick(const ProgressSnapshot& snapshot) override {
    if (snapshot.planned) write(snapshot, "running", std::nullopt, snapshot.last_error);
  }
  void event(const ProgressEvent& event, const ProgressSnapshot& snapshot) override {
    if (event.kind == ProgressEvent::Kind::kPlan) tick(snapshot);
  }
  // A run that failed before it held the lock (repo not found, say) records its outcome only when it was
  // launched with --detach (whose launcher made the folder safely and told the user to `wait`), and never
  // over the state of another live download.
  void finish(const ProgressSnapshot& snapshot, const ProgressOutcome& outcome) override {
    if (!snapshot.planned) {
      if (!detached_) return;
      const std::optional<DownloadState> current = read_state_file(record_.path());
      if (current && current->state == "running" && current->pid != ::getpid() &&
          process_alive(current->pid, current->started_at))
        return;
    }
    write(snapshot, outcome.state, outcome.exit_code, outcome.error);
  }

 private:
  void write(const ProgressSnapshot& snapshot, const std::string& state, std::optional<int> exit_code,
             const std::string& error) {
    nlohmann::json data = {
        {"pid", static_cast<long>(::getpid())},
        {"state", state},
        {"exit_code", exit_code ? nlohmann::json(*exit_code) : nlohmann::json(nullptr)},
        {"repo", repo_},
        {"revision", revision_},
        {"commit", snapshot.commit},
        {"target", target_},
        {"started_at", started_at_},
        {"updated_at", utc_timestamp()},
        {"files_done", snapshot.files_done},
        {"files_total", snapshot.files_total},
        {"shards_done", snapshot.shards_done},
        {"shards_total", snapshot.shards_total},
        {"bytes_done", snapshot.bytes_done},
        {"bytes_total", snapshot.bytes_total},
        {"rate_bytes_per_second", snapshot.rate_bytes_per_second},
        {"eta_seconds", snapshot.eta_seconds ? nlohmann::json(*snapshot.eta_seconds) : nlohmann::json(nullptr)},
        {"last_error", clipped(error, kRecordedErrorChars)},
        {"in_flight", in_flight_record(snapshot)},
        {"files_in_flight", snapshot.active.size()},
    };
    if (!log_file_.empty()) data["log_file"] = log_file_;
    try {
      // Reserved: the last record of a run that filled the disk must still be written (exit code 9, the cause).
      record_.write(fitted(data, util::ReservedRecordFile::kDefaultCapacity));
    } catch (const std::exception&) {
      // A progress report must not become a failure; the download reports the real error.
    }
  }

  bool detached_;
  util::ReservedRecordFile record_;
  std::string repo_;
  std::string revision_;
  std::string target_;
  std::string log_file_;
  std::string started_at_;
};

// Both records say when their process was already running, in the same form.
std::optional<std::chrono::system_clock::time_point> started_at_of(const nlohmann::json& record) {
  const auto started = record.find("started_at");
  if (started == record.end() || !started->is_string()) return std::nullopt;
  return parse_utc_timestamp(started->get<std::string>());
}

}  // namespace

std::filesystem::path state_file_path(const std::filesystem::path& state_dir) {
  return state_dir / "state.json";
}
std::filesystem::path detached_file_path(const std::filesystem::path& state_dir) {
  return state_dir / "detached.json";
}

std::optional<DownloadState> read_state_file(const std::filesystem::path& path) {
  std::optional<nlohmann::json> data = read_json(path);
  if (!data) return std::nullopt;
  DownloadState state;
  const auto pid = data->find("pid");
  const auto name = data->find("state");
  if (pid == data->end() || !pid->is_number_integer() || name == data->end() || !name->is_string()) return std::nullopt;
  state.pid = pid->get<long>();
  state.state = name->get<std::string>();
  state.started_at = started_at_of(*data);
  const auto code = data->find("exit_code");
  if (code != data->end() && code->is_number_integer()) state.exit_code = code->get<int>();
  state.fields = std::move(*data);
  return state;
}

std::optional<DetachedLaunch> read_detached_launch(const std::filesystem::path& state_dir) {
  std::optional<nlohmann::json> data = read_json(detached_file_path(state_dir));
  if (!data) return std::nullopt;
  const auto pid = data->find("pid");
  if (pid == data->end() || !pid->is_number_integer()) return std::nullopt;
  DetachedLaunch launch{pid->get<long>(), started_at_of(*data), {}};
  const auto log = data->find("log");
  if (log != data->end() && log->is_string()) launch.log = log->get<std::string>();
  return launch;
}

void write_detached_launch(const std::filesystem::path& state_dir, long pid, const std::filesystem::path& log) {
  const nlohmann::json record = {{"pid", pid}, {"started_at", utc_timestamp()}, {"log", log.string()}};
  util::write_file_atomically(
      detached_file_path(state_dir),
      record.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace) + "\n");
}

bool process_alive(long pid, std::optional<std::chrono::system_clock::time_point> running_at) {
  if (pid <= 0) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  // A killed process nobody has reaped yet (a daemon whose parent is a container's PID 1 that does not reap)
  // still answers kill(pid, 0); /proc says 'Z' for it. What /proc does not show is presumed alive.
  const std::optional<util::ProcessStat> process = util::read_process_stat(pid);
  if (!process) return true;
  return process->state != 'Z' && !(running_at && util::started_after(*process, *running_at));
}

std::unique_ptr<ProgressView> make_state_file_view(std::filesystem::path path, std::string repo, std::string revision,
                                                   std::string target, std::string log_file, bool detached) {
  return std::make_unique<StateFileView>(std::move(path), std::move(repo), std::move(revision), std::move(target),
                                         std::move(log_file), detached);
}

}  // namespace hfget::cli
