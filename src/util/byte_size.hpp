// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hfget::util {

/// "595.1 GB" (powers of 1000, as the Hub's web page counts).
std::string format_decimal_bytes(std::uint64_t bytes);
/// "554.2 GiB" (powers of 1024, as du and df count).
std::string format_binary_bytes(std::uint64_t bytes);
/// "595.1 GB (554.2 GiB)": both, so that the Hub's figure and du's can be told apart at a glance.
std::string format_bytes_both(std::uint64_t bytes);
/// "32MiB", "1.5GB", "65536", "512k" (k/m/g are binary, as in curl) → bytes; nullopt if not a size.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);
/// "612.3 MB/s".
std::string format_rate(double bytes_per_second);
/// "9m12s", "1h02m", "45s".
std::string format_duration(double seconds);

}  // namespace hfget::util
