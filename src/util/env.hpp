// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace hfget::util {

/// The variable's value when it is set (even to ""), as Python's os.getenv does.
std::optional<std::string> env_value(const char* name);
/// The variable's value when it is set and not empty.
std::optional<std::string> env_nonempty(const char* name);
/// True for 1/ON/YES/TRUE in any case: the Hub client's boolean convention.
bool env_flag(const char* name);
/// "~" and "~/x" expanded with $HOME, and $VAR / ${VAR} expanded (unset variables stay as written),
/// as os.path.expandvars(os.path.expanduser(p)) does.
std::filesystem::path expand_user_and_vars(const std::string& text);

}  // namespace hfget::util
