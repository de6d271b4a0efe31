// SPDX-License-Identifier: MIT
#include "transfer/connection_controller.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace hfget::transfer {
namespace {

constexpr int kStarvedWindowsToGiveUp = 4;

std::size_t less_an_eighth(std::size_t count) {
  return count - std::max<std::size_t>(1, count / 8);
}

// "+23%", "-4%": how a rate compares with the one it is measured against.
std::string percent(double rate, double against) {
  if (against <= 0) return "+0%";
  return fmt::format("{:+.0f}%", (rate / against - 1) * 100);
}

}  // namespace

ConnectionController::ConnectionController(ControllerSettings settings)
    : settings_(settings),
      count_(std::clamp<std::size_t>(std::min(settings.start, settings.ranges_available), 1,
                                     std::max<std::size_t>(settings.ceiling, 1))) {
  windows_to_skip_ = settings_.settle_windows;
}

std::string ConnectionController::start_reason() const {
  return fmt::format("starting at {}, adapting up to {}", count_, settings_.ceiling);
}

std::size_t ConnectionController::limit() const {
  const std::size_t ceiling = std::max<std::size_t>(settings_.ceiling, 1);
  return push_back_cap_ ? std::min(*push_back_cap_, ceiling) : ceiling;
}

std::optional<ConnectionChange> ConnectionController::feed(const ConnectionSample& sample) {
  elapsed_ += sample.seconds;
  if (push_back_cap_ && elapsed_ >= push_back_until_) push_back_cap_.reset();
  // Push-backs of connections above the last cut (still finishing their ranges, retrying the refused ones)
  // arrive for a while after it: the same episode, not a new one, or one episode would cut the count to 1.
  const bool quiet_since_cut = !last_cut_at_ || elapsed_ - *last_cut_at_ >= settings_.push_back_quiet_seconds;
  if (sample.push_backs > 0 && quiet_since_cut) return on_push_back(sample.push_backs);
  if (phase_ == Phase::kHolding) {
    if (elapsed_ - steady_since_ < settings_.reprobe_after_seconds) return std::nullopt;
    // Steady long enough: the link may have changed. Measure the count afresh, then probe from there.
    change_to(count_, Phase::kMeasuring, {});
    windows_to_skip_ = 0;  // the count has not changed: nothing to settle
    reprobing_ = true;
    return std::nullopt;
  }
  const std::optional<double> rate = measure(sample);
  if (rate) return on_rate(*rate);
  // A batch whose connections find no range (few files open, each a single range) cannot be measured; 2 s
  // of that and it is given back rather than left idle until the end.
  if (phase_ == Phase::kClimbing && starved_windows_ >= kStarvedWindowsToGiveUp) {
    return hold(change_to(
        previous_count_, Phase::kHolding,
        fmt::format("only {} of {} connections find work: back to {}", sample.busy, count_, previous_count_)));
  }
  // The same at the start (fewer ranges open than the starting count): more could not be measured either.
  // Held as it is; the re-probe looks again once more ranges may be open.
  if (phase_ == Phase::kMeasuring && starved_windows_ >= kStarvedWindowsToGiveUp) return hold(std::nullopt);
  return std::nullopt;
}

std::optional<double> ConnectionController::measure(const ConnectionSample& sample) {
  // The settling starts with the first bytes: at the start the files are still opening and the first
  // answers bring a burst (a server's socket buffers fill at once), neither of which is the count's rate.
  if (windows_to_skip_ > 0) {
    if (sample.bytes > 0) --windows_to_skip_;
    return std::nullopt;
  }
  // Fewer connections busy than the count: the download's tail, or files still opening. The rate then says
  // nothing of what the count can move, and a falling one is no plateau.
  if (sample.seconds <= 0) return std::nullopt;
  if (sample.busy * 8 < count_ * 7) {
    ++starved_windows_;
    return std::nullopt;
  }
  starved_windows_ = 0;
  measured_bytes_ += sample.bytes;
  measured_seconds_ += sample.seconds;
  // A doubling is judged against half its linear gain, which one window's noise does not blur: measured over
  // one window, so a capped link is filled in seconds; so is the start it is compared with. Batches and
  // trims, judged to a few percent: two.
  const bool doubled = phase_ == Phase::kClimbing && count_ >= 2 * previous_count_;
  const bool first = phase_ == Phase::kMeasuring && !reprobing_;  // judged as the doubling that follows
  if (++windows_measured_ < (doubled || first ? 1 : settings_.measure_windows)) return std::nullopt;
  const double rate = static_cast<double>(measured_bytes_) / measured_seconds_;
  windows_measured_ = 0;
  measured_bytes_ = 0;
  measured_seconds_ = 0;
  return rate;
}

ConnectionChange ConnectionController::change_to(std::size_t count, Phase phase, std::string reason) {
  count_ = count;
  phase_ = phase;
  windows_to_skip_ = settings_.settle_windows;
  windows_measured_ = 0;
  measured_bytes_ = 0;
  measured_seconds_ = 0;
  starved_windows_ = 0;
  return {count, std::move(reason)};
}

std::optional<ConnectionChange> ConnectionController::hold(std::optional<ConnectionChange> change) {
  phase_ = Phase::kHolding;
  steady_since_ = elapsed_;
  reprobing_ = false;
  return change;
}

std::optional<ConnectionChange> ConnectionController::on_push_back(std::uint64_t events) {
  const std::size_t cut = count_ > 1 ? count_ - std::max<std::size_t>(1, count_ / 4) : 1;
  push_back_cap_ = cut;
  push_back_until_ = elapsed_ + settings_.push_back_hold_seconds;
  last_cut_at_ = elapsed_;
  if (cut == count_) return hold(std::nullopt);
  return hold(change_to(cut, Phase::kHolding,
                        fmt::format("server push-back ({} refused, reset or 503 answer{}): down to {} for {:.0f} min",
                                    events, events == 1 ? "" : "s", cut, settings_.push_back_hold_seconds / 60)));
}

std::optional<ConnectionChange> ConnectionController::on_rate(double rate) {
  // Nothing moved yet (the first files still opening, the first bytes still in the sockets): no rate to
  // compare with. Measured again, in the same phase.
  if (rate <= 0) return std::nullopt;
  if (phase_ == Phase::kClimbing && baseline_rate_ <= 0) {
    baseline_rate_ = rate;
    previous_count_ = count_;
    phase_ = Phase::kMeasuring;
  }
  switch (phase_) {
    case Phase::kMeasuring: {
      baseline_rate_ = rate;
      previous_count_ = count_;
      if (count_ >= limit()) return at_plateau(count_, rate, fmt::format("at the ceiling of {}", limit()));
      // The first step doubles: a link that caps connections is filled in seconds, one that does not gives
      // the doubling back after one measurement. A re-probe adds a batch: the count was right a while ago.
      const std::size_t next = std::min(limit(), reprobing_ ? count_ + batch() : count_ * 2);
      const std::string why = reprobing_
                                  ? fmt::format("re-probing after {:.0f} s steady: adding {}",
                                                settings_.reprobe_after_seconds, next - count_)
                                  : fmt::format("adding {}: {} moved {:.1f} MB/s", next - count_, count_, rate / 1e6);
      return change_to(next, Phase::kClimbing, why);
    }
    case Phase::kClimbing: {
      if (rate < baseline_rate_ * (1 + settings_.gain_to_keep)) {
        return at_plateau(previous_count_, baseline_rate_,
                          fmt::format("plateau: {} from the last batch", percent(rate, baseline_rate_)));
      }
      const std::string gain = percent(rate, baseline_rate_);
      // Each added connection still brought at least half of what the others move: the link caps every
      // connection and is far from full. The count doubles then (16, 32, 64 in 2 s), else batches follow.
      const double added = static_cast<double>(count_ - previous_count_) / static_cast<double>(previous_count_);
      const bool far_from_full = rate / baseline_rate_ - 1 >= added / 2;
      baseline_rate_ = rate;
      previous_count_ = count_;
      if (count_ >= limit()) {
        // Still paying almost in full at the ceiling: an eighth less would move an eighth less.
        if (far_from_full) return hold(std::nullopt);
        return at_plateau(count_, rate, fmt::format("at the ceiling of {} ({} from the last batch)", limit(), gain));
      }
      const std::size_t next = std::min(limit(), far_from_full ? count_ * 2 : count_ + batch());
      return change_to(next, Phase::kClimbing, fmt::format("adding {}: {} from the last batch", next - count_, gain));
    }
    case Phase::kTrimming: {
      if (rate < plateau_rate_ * (1 - settings_.trim_tolerance)) {
        return hold(change_to(previous_count_, Phase::kHolding,
                              fmt::format("holding {}: {} moved {} less", previous_count_, count_,
                                          percent(rate, plateau_rate_).substr(1))));
      }
      plateau_rate_ = std::max(plateau_rate_, rate);
      previous_count_ = count_;
      if (count_ <= 1) return hold(std::nullopt);
      const std::size_t next = less_an_eighth(count_);
      return change_to(next, Phase::kTrimming,
                       fmt::format("giving back {}: {} moved as much as more did", count_ - next, count_));
    }
    case Phase::kHolding: break;
  }
  return std::nullopt;
}

std::optional<ConnectionChange> ConnectionController::at_plateau(std::size_t good_count, double good_rate,
                                                                 const std::string& why) {
  plateau_rate_ = good_rate;
  previous_count_ = good_count;
  if (good_count <= 1) {
    if (count_ == good_count) return hold(std::nullopt);
    return hold(change_to(good_count, Phase::kHolding, fmt::format("{}: back to {}", why, good_count)));
  }
  // Fewer may do as well (the batch before the last one may already have been more than the link needs).
  const std::size_t next = less_an_eighth(good_count);
  return change_to(next, Phase::kTrimming, fmt::format("{}: trying {} ({} less an eighth)", why, next, good_count));
}

}  // namespace hfget::transfer
