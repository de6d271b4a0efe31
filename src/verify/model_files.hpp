// SPDX-License-Identifier: MIT
#pragma once

#include "hfget/verify.hpp"
#include "verify/inventory.hpp"
#include "verify/snapshot_checks.hpp"

namespace hfget::verify {

/// config: config.json (or a diffusers model_index.json) is present and valid JSON.
CheckResult check_config(const SnapshotOnDisk& snapshot, const Inventory& inventory, const CheckSettings& settings,
                         VerifyReport& report);

/// tokenizer: at least one tokenizer file (tokenizer.json, tokenizer.model, tiktoken.model, *.tiktoken,
/// vocab.json + merges.txt, spiece.model, sentencepiece.bpe.model, vocab.txt) is present, plus
/// tokenizer_config.json where the repo has one. Files the download excluded are reported as excluded.
CheckResult check_tokenizer(const SnapshotOnDisk& snapshot, const Inventory& inventory, const CheckSettings& settings,
                            VerifyReport& report);

}  // namespace hfget::verify
