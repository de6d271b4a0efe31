// SPDX-License-Identifier: MIT
// No fixed connection count is right: behind a CDN edge that caps each connection at 8.7 MB/s a download
// needs dozens, on an uncapped link every connection past a few only costs (issue 17's measurements). The
// controller finds the count for the link it is on and keeps it right for hours: it climbs while the
// aggregate rate keeps rising (doubling while every added connection pays almost in full, then in batches),
// gives back what no longer pays, backs off when the server pushes back, and re-probes now and then so a
// link that changes is followed. It is pure logic, fed one sample per
// window by the sampler (connection_steering.hpp): no clock, no thread, so tests drive it window by window.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace hfget::transfer {

/// What the connections did in one window.
struct ConnectionSample {
  std::uint64_t bytes = 0;       // moved in the window, over every connection
  double seconds = 0;            // the window's length
  std::size_t busy = 0;          // connections with a range in flight at its end
  std::uint64_t push_backs = 0;  // server push-backs in the window (429, 503, 403 on a range, resets)
};

struct ConnectionChange {
  std::size_t count = 0;
  std::string reason;  // for people: "adding 8: +23% from the last batch"
};

struct ControllerSettings {
  std::size_t ceiling = 64;                // never more (--max-connections)
  std::size_t ranges_available = 1 << 20;  // chunks of the plan: no point starting with more connections
  // hfget's fixed count before the controller, the best or near it on every uncapped link measured (issue
  // 17), so starting there costs nothing where no cap is; behind one, the doubling starts from it.
  std::size_t start = 16;
  double gain_to_keep = 0.05;           // a batch stays when the rate rose at least this much
  double trim_tolerance = 0.03;         // a trim stays when the rate fell at most this much
  int settle_windows = 1;               // skipped after a change: new connections are still ramping up
  int measure_windows = 2;              // then averaged into the count's rate (one for a doubling)
  double reprobe_after_seconds = 45;    // steady this long: probe upward again
  double push_back_hold_seconds = 300;  // after push-back, the cut count is the ceiling this long
  // After a cut, the connections above it still finish their ranges, and retry the refused ones with backoff:
  // their push-backs are the same episode, not a new one. One cut per this long at most.
  double push_back_quiet_seconds = 10;
};

/// Decides the connection count from samples. Not thread-safe: one sampler feeds it.
class ConnectionController {
 public:
  explicit ConnectionController(ControllerSettings settings);

  std::size_t count() const { return count_; }
  /// Why the count is what it is at the start.
  std::string start_reason() const;
  /// Folds one window in; returns the new count and why when it changes.
  std::optional<ConnectionChange> feed(const ConnectionSample& sample);

 private:
  enum class Phase {
    kMeasuring,  // the current count's rate, the baseline of the next batch
    kClimbing,   // a batch was added: does it pay?
    kTrimming,   // an eighth was given back: does the rate hold?
    kHolding,    // steady until the re-probe
  };

  std::size_t limit() const;  // the ceiling, or the push-back cap while it lasts
  std::size_t batch() const { return count_ / 4 > 8 ? count_ / 4 : 8; }
  std::size_t trim() const { return count_ / 8 > 1 ? count_ / 8 : 1; }
  // A valid window's measurement; returns the count's rate once enough windows are in.
  std::optional<double> measure(const ConnectionSample& sample);
  ConnectionChange change_to(std::size_t count, Phase phase, std::string reason);
  std::optional<ConnectionChange> on_push_back(std::uint64_t events);
  std::optional<ConnectionChange> on_rate(double rate);
  // Climbed as far as it pays (or may) at good_count: try an eighth less, else hold.
  std::optional<ConnectionChange> at_plateau(std::size_t good_count, double good_rate, const std::string& why);
  std::optional<ConnectionChange> hold(std::optional<ConnectionChange> change);

  ControllerSettings settings_;
  std::size_t count_;
  Phase phase_ = Phase::kMeasuring;
  int windows_to_skip_ = 0;
  int windows_measured_ = 0;
  int starved_windows_ = 0;  // windows in a row with fewer than 7/8 of the connections busy
  std::uint64_t measured_bytes_ = 0;
  double measured_seconds_ = 0;
  double baseline_rate_ = 0;  // the rate at previous_count_
  std::size_t previous_count_ = 0;
  double plateau_rate_ = 0;  // the best rate at the plateau, what a trim must keep
  double elapsed_ = 0;       // seconds fed so far
  double steady_since_ = 0;
  bool reprobing_ = false;
  std::optional<double> last_cut_at_;  // elapsed seconds at the last push-back cut
  std::optional<std::size_t> push_back_cap_;
  double push_back_until_ = 0;
};

}  // namespace hfget::transfer
