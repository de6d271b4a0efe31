// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <stop_token>

namespace hfget::cli {

/// Adds `download` to the app. Returns the function that runs it once parsing succeeded; it returns the
/// process exit code or throws hfget::Error.
std::function<int(std::stop_token)> add_download_command(CLI::App& app);

}  // namespace hfget::cli
