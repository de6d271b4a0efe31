// SPDX-License-Identifier: MIT
// Repo paths from a listing (untrusted) and glob patterns. The input is split at its first NUL byte into a
// pattern and a path: fnmatch_case(pattern, path); unsafe_path_reason() sees the path and the whole input.
#include <optional>
#include <string>

#include "fuzz_check.hpp"
#include "hfget/error.hpp"
#include "store/repo_path.hpp"
#include "util/glob_match.hpp"

namespace {

void check_path(std::string_view path) {
  const std::optional<std::string> reason = hfget::store::unsafe_path_reason(path);
  if (reason) return;
  // What it accepts stays inside the directory it is joined to.
  HFGET_FUZZ_CHECK(!path.empty() && path.front() != '/' && path.find('\\') == std::string_view::npos);
  HFGET_FUZZ_CHECK(path.find('\0') == std::string_view::npos);
  HFGET_FUZZ_CHECK(path != ".." && path.substr(0, 3) != "../" && path.find("/../") == std::string_view::npos);
  HFGET_FUZZ_CHECK(path.size() < 3 || path.substr(path.size() - 3) != "/..");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = hfget::fuzz::as_text(data, size);
  const std::size_t nul = input.find('\0');
  const std::string_view pattern = input.substr(0, nul);
  const std::string_view path = nul == std::string_view::npos ? std::string_view{} : input.substr(nul + 1);
  try {
    check_path(input);
    check_path(path);
    const bool matched = hfget::util::fnmatch_case(pattern, path);
    if (pattern.find_first_of("*?[") == std::string_view::npos) HFGET_FUZZ_CHECK(matched == (pattern == path));
    HFGET_FUZZ_CHECK(hfget::util::fnmatch_case("*", path));
  } catch (const hfget::Error&) {
  }
  return 0;
}
