// SPDX-License-Identifier: MIT
// The download's progress, as the run record holds it: this view only fills a RunRecord from the snapshot; the
// record's format, its reserved space and its fitting are the library's (src/run/run_record.cpp).
#include "cli/state_file.hpp"

#include <unistd.h>

#include "hfget/run_observation.hpp"

namespace hfget::cli {
namespace {

class StateFileView final : public ProgressView {
 public:
  StateFileView(std::filesystem::path path, std::string repo, std::string revision, std::string target,
                std::string log_file, bool detached)
      : detached_(detached), path_(std::move(path)) {
    record_.repo = std::move(repo);
    record_.revision = std::move(revision);
    record_.target = std::move(target);
    record_.log_file = std::move(log_file);
    record_.started_at = utc_timestamp();
  }

  std::chrono::milliseconds period() const override { return std::chrono::seconds(2); }

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
    if (!snapshot.planned && (!detached_ || another_run_is_recorded_live(path_, ::getpid()))) return;
    write(snapshot, outcome.state, outcome.exit_code, outcome.error);
  }

 private:
  void write(const ProgressSnapshot& snapshot, const std::string& state, std::optional<int> exit_code,
             const std::string& error) {
    record_.pid = ::getpid();
    record_.state = state;
    record_.exit_code = exit_code;
    record_.commit = snapshot.commit;
    record_.updated_at = utc_timestamp();
    record_.files_done = snapshot.files_done;
    record_.files_total = snapshot.files_total;
    record_.shards_done = snapshot.shards_done;
    record_.shards_total = snapshot.shards_total;
    record_.bytes_done = snapshot.bytes_done;
    record_.bytes_total = snapshot.bytes_total;
    record_.rate_bytes_per_second = snapshot.rate_bytes_per_second;
    record_.eta_seconds = snapshot.eta_seconds;
    record_.last_error = error;
    record_.in_flight.clear();
    for (const ActiveFile& file : snapshot.active) record_.in_flight.push_back({file.path, file.size, file.done});
    record_.files_in_flight = snapshot.active.size();
    try {
      write_run_record(path_, record_);
    } catch (const std::exception&) {
      // A progress report must not become a failure; the download reports the real error.
    }
  }

  bool detached_;
  std::filesystem::path path_;
  RunRecord record_;
};

}  // namespace

std::unique_ptr<ProgressView> make_state_file_view(std::filesystem::path path, std::string repo, std::string revision,
                                                   std::string target, std::string log_file, bool detached) {
  return std::make_unique<StateFileView>(std::move(path), std::move(repo), std::move(revision), std::move(target),
                                         std::move(log_file), detached);
}

}  // namespace hfget::cli
