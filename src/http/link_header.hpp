// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hfget::http {

/// The target of the `rel="next"` link in an RFC 8288 Link header, as the Hub uses for pagination:
/// `<https://hub/api/models/x/tree/c?cursor=abc>; rel="next"`. nullopt when there is none.
std::optional<std::string> next_link(std::string_view header_value);

}  // namespace hfget::http
