// SPDX-License-Identifier: MIT
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "hfget/verify.hpp"

namespace hfget::cli {

/// One line per check, one line per bad file, one summary line (docs/verify.md shows an example).
std::string render_verify_report_text(const VerifyReport& report);
/// The same as one JSON document with stable field names (schema in docs/verify.md).
std::string render_verify_report_json(const VerifyReport& report);
/// That document as JSON, for documents that embed it (`download --json`).
nlohmann::json verify_report_document(const VerifyReport& report);

/// The progress line of a running verify (on stderr): "hashing: 12/70 files, 210.4 GiB / 547.0 GiB (38.5%),
/// 1.5 GB/s, ETA 4m12s"; "checking files" before the hashing starts.
std::string verify_progress_line(const VerifyProgress& progress, double elapsed_seconds);

}  // namespace hfget::cli
