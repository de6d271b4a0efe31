// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include "hfget/download.hpp"
#include "hfget/error.hpp"

namespace hfget::cli {

/// `download --json`: one JSON document on stdout when the download ends, for deploy scripts that want more
/// than the path: where the files are, which commit, what was fetched and what was already there, the
/// checks. Schema in docs/cli.md; field names are stable.
std::string render_download_result_json(const DownloadReport& report, const DownloadOptions& options,
                                        const std::string& path);

/// The same document for a run that failed: `ok` false, the exit code, the error's kind, message and file.
std::string render_download_failure_json(const Error& error, int exit_code, const DownloadOptions* options);

}  // namespace hfget::cli
