// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace hfget::run {

/// A record's JSON object as read from disk, where anyone may have written anything: nullopt for a file that
/// is missing, over 1 MiB, not one JSON object, or nested deeper than `max_depth` (the parser's objects are
/// freed and copied recursively: a file of 500 000 '[' must not exhaust the stack). A read that meets a record
/// being rewritten is retried, a few times.
std::optional<nlohmann::json> read_record_object(const std::filesystem::path& path, int max_depth);

/// The record as text: ASCII only (a hostile repo's paths are escaped), invalid UTF-8 replaced, one field a line.
std::string record_text(const nlohmann::json& record, int indent);

/// The field, when it holds the type asked for; nullopt otherwise. Counters are non-negative integers.
std::optional<std::string> string_field(const nlohmann::json& record, const char* key);
std::optional<std::uint64_t> count_field(const nlohmann::json& record, const char* key);
std::optional<double> number_field(const nlohmann::json& record, const char* key);
std::optional<long> integer_field(const nlohmann::json& record, const char* key);

/// "started_at": when the process the record names was already running, in both records' form.
std::optional<std::chrono::system_clock::time_point> started_at_of(const nlohmann::json& record);

}  // namespace hfget::run
