// SPDX-License-Identifier: MIT
// detached.json: the PID a --detach launch started, written by that process before it takes the target lock,
// so that status and wait can tell a run still starting (or queued behind another) from one that never ran.
#include "hfget/run_record.hpp"
#include "run/record_json.hpp"
#include "util/atomic_file.hpp"
#include "util/utc_timestamp.hpp"

namespace hfget {
namespace {

constexpr int kLaunchDepth = 4;  // one flat object

}  // namespace

std::filesystem::path detached_launch_path(const std::filesystem::path& state_dir) {
  return state_dir / "detached.json";
}

void write_detached_launch(const std::filesystem::path& state_dir, long pid, const std::filesystem::path& log) {
  const nlohmann::json record = {{"pid", pid}, {"started_at", util::utc_timestamp()}, {"log", log.string()}};
  util::write_file_atomically(detached_launch_path(state_dir), run::record_text(record, -1));
}

std::optional<DetachedLaunch> read_detached_launch(const std::filesystem::path& state_dir) {
  const std::optional<nlohmann::json> data = run::read_record_object(detached_launch_path(state_dir), kLaunchDepth);
  if (!data) return std::nullopt;
  const std::optional<long> pid = run::integer_field(*data, "pid");
  if (!pid) return std::nullopt;
  return DetachedLaunch{*pid, run::started_at_of(*data), run::string_field(*data, "log").value_or("")};
}

}  // namespace hfget
