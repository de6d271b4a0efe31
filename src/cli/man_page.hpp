// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace hfget::cli {

/// hfget(1) in roff, written from the same CLI11 tree that --help prints (every visible command, its
/// positionals and options, with their descriptions), so the page and --help cannot drift apart. The build
/// runs `hfget __man` to make it (CMakeLists.txt).
std::string man_page(const CLI::App& root, const std::string& version);

/// `text` with roff's special characters escaped, safe on a line of its own.
std::string roff_escape(const std::string& text);

}  // namespace hfget::cli
