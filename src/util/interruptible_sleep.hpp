// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <stop_token>

namespace hfget::util {

/// Sleeps for `duration` or until `stop` fires; returns false if stopped.
bool sleep_unless_stopped(std::chrono::milliseconds duration, const std::stop_token& stop);

}  // namespace hfget::util
