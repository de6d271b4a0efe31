// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace hfget::util {

/// "2026-11-29T14:02:10Z": UTC, so lines and records from servers in different zones compare.
std::string utc_timestamp(std::chrono::system_clock::time_point time = std::chrono::system_clock::now());
/// The time a utc_timestamp() names ("2026-11-29T14:03:05Z"); nullopt for anything else.
std::optional<std::chrono::system_clock::time_point> parse_utc_timestamp(const std::string& text);

}  // namespace hfget::util
