// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

namespace hfget::store {

/// A JSON object file of ours or the Python client's (trees/<commit>.json, hfget/<commit>.json) whose
/// "format_version" is `version`; nullopt when missing, unreadable, damaged or of another format, which every
/// reader treats as "not recorded".
std::optional<nlohmann::json> read_json_record(const std::filesystem::path& path, int version);

}  // namespace hfget::store
