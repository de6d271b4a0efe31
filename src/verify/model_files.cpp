// SPDX-License-Identifier: MIT
// The files a model needs besides its weights. A download that lost tokenizer.json looks complete to
// `du` and `ls | wc -l` and fails only when the model is loaded; these checks catch it at download time.
//
// config.json is a downloaded file and may be hostile (up to kMaxJsonBytes): its validity is checked as a
// stream of SAX events that stores nothing, read through a 64 KiB window, so it costs no more than its
// longest string (reading it whole took twice its size: 800 MB for a 400 MB file).
#include "verify/model_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <istream>
#include <nlohmann/json.hpp>

#include "util/file_range_streambuf.hpp"
#include "util/unique_fd.hpp"

namespace hfget::verify {
namespace {

constexpr std::uint64_t kMaxJsonBytes = 512 << 20;
// Python's json module (what transformers loads a config with) gives up near 1000 levels.
constexpr std::size_t kMaxJsonDepth = 1000;

// Accepts any JSON nested at most kMaxJsonDepth deep, keeping nothing.
class Acceptor final : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() override { return true; }
  bool boolean(bool /*value*/) override { return true; }
  bool number_integer(number_integer_t /*value*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*value*/) override { return true; }
  bool number_float(number_float_t /*value*/, const string_t& /*text*/) override { return true; }
  bool string(string_t& /*value*/) override { return true; }
  bool binary(binary_t& /*value*/) override { return true; }
  bool start_object(std::size_t /*elements*/) override { return ++depth_ <= kMaxJsonDepth; }
  bool key(string_t& /*value*/) override { return true; }
  bool end_object() override { return close(); }
  bool start_array(std::size_t /*elements*/) override { return ++depth_ <= kMaxJsonDepth; }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*error*/) override {
    return false;
  }

 private:
  bool close() {
    --depth_;
    return true;
  }

  std::size_t depth_ = 0;
};

bool is_valid_json_file(const std::filesystem::path& path) {
  const util::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat info {};
  if (!fd.valid() || ::fstat(fd.get(), &info) != 0 || static_cast<std::uint64_t>(info.st_size) > kMaxJsonBytes) {
    return false;
  }
  util::FileRangeStreambuf window(fd.get(), 0, static_cast<std::uint64_t>(info.st_size));
  std::istream stream(&window);
  Acceptor acceptor;
  return nlohmann::json::sax_parse(stream, &acceptor) && window.error() == 0 && !window.ended_early();
}

// Where tokenizer files may live: the root, and (diffusers pipelines) folders named tokenizer*.
bool in_tokenizer_folder(const std::string& path, std::string& name) {
  const std::size_t slash = path.find('/');
  if (slash == std::string::npos) {
    name = path;
    return true;
  }
  if (path.find('/', slash + 1) != std::string::npos || path.rfind("tokenizer", 0) != 0) return false;
  name = path.substr(slash + 1);
  return true;
}

bool is_tokenizer_payload(const std::string& name) {
  static constexpr std::array<std::string_view, 7> kNames{"tokenizer.json",         "tokenizer.model", "tiktoken.model",
                                                          "spiece.model",           "vocab.txt",       "vocab.json",
                                                          "sentencepiece.bpe.model"};
  if (std::find(kNames.begin(), kNames.end(), name) != kNames.end()) return true;
  return name.size() > 9 && name.substr(name.size() - 9) == ".tiktoken";
}

// vocab.json is a tokenizer only with its merges.txt (BPE).
bool payload_complete(const std::set<std::string>& names) {
  for (const std::string& name : names) {
    if (!is_tokenizer_payload(name)) continue;
    if (name == "vocab.json" && names.count("merges.txt") == 0) continue;
    return true;
  }
  return false;
}

std::set<std::string> tokenizer_names(const std::set<std::string>& paths) {
  std::set<std::string> names;
  for (const std::string& path : paths) {
    std::string name;
    if (in_tokenizer_folder(path, name)) names.insert(name);
  }
  return names;
}

CheckResult absent_upstream(const char* check, const char* allow_name, const std::string& what,
                            const CheckSettings& settings) {
  if (settings.allow_missing.count(allow_name) != 0) {
    return {check, CheckStatus::kSkip, what + " (allowed by --allow-missing " + allow_name + ")"};
  }
  if (!settings.absent_upstream_fails) return {check, CheckStatus::kSkip, "warning: " + what};
  return {check, CheckStatus::kFail,
          what + " (use --allow-missing " + std::string(allow_name) + " if that is expected)"};
}

}  // namespace

CheckResult check_config(const SnapshotOnDisk& snapshot, const Inventory& inventory, const CheckSettings& settings,
                         VerifyReport& report) {
  if (snapshot.repo_type != RepoType::kModel) return {"config", CheckStatus::kSkip, "not a model repo"};
  for (const char* name : {"config.json", "model_index.json"}) {
    if (inventory.is_present(name)) {
      if (is_valid_json_file(snapshot.root / name))
        return {"config", CheckStatus::kPass, std::string(name) + " is valid JSON"};
      report.problems.push_back({name, "config", "not valid JSON"});
      return {"config", CheckStatus::kFail, std::string(name) + " is not valid JSON"};
    }
  }
  for (const char* name : {"config.json", "model_index.json"}) {
    if (inventory.is_excluded(name)) {
      return {"config", CheckStatus::kSkip, std::string(name) + " was excluded by the download's selection"};
    }
    if (inventory.upstream.count(name) != 0) {
      report.problems.push_back({name, "config", "missing"});
      return {"config", CheckStatus::kFail, std::string(name) + " is missing"};
    }
  }
  return absent_upstream("config", "config", "no config.json or model_index.json", settings);
}

CheckResult check_tokenizer(const SnapshotOnDisk& snapshot, const Inventory& inventory, const CheckSettings& settings,
                            VerifyReport& report) {
  if (snapshot.repo_type != RepoType::kModel) return {"tokenizer", CheckStatus::kSkip, "not a model repo"};
  const std::set<std::string> present = tokenizer_names(inventory.on_disk);
  const std::set<std::string> upstream = tokenizer_names(inventory.upstream);

  if (payload_complete(present)) {
    if (upstream.count("tokenizer_config.json") != 0 && present.count("tokenizer_config.json") == 0) {
      if (inventory.is_excluded("tokenizer_config.json")) {
        return {"tokenizer", CheckStatus::kSkip, "tokenizer_config.json was excluded by the download's selection"};
      }
      report.problems.push_back({"tokenizer_config.json", "tokenizer", "missing"});
      return {"tokenizer", CheckStatus::kFail, "tokenizer_config.json is missing"};
    }
    std::string found;
    for (const std::string& name : present) {
      if (is_tokenizer_payload(name) || name == "tokenizer_config.json" || name == "merges.txt") {
        found += (found.empty() ? "" : ", ") + name;
      }
    }
    return {"tokenizer", CheckStatus::kPass, found};
  }
  if (payload_complete(upstream)) {
    std::vector<std::string> missing;
    bool all_excluded = true;
    for (const std::string& path : inventory.upstream) {
      std::string name;
      if (!in_tokenizer_folder(path, name) || !(is_tokenizer_payload(name) || name == "merges.txt")) continue;
      if (inventory.is_present(path)) continue;
      if (!inventory.is_excluded(path)) all_excluded = false;
      missing.push_back(path);
    }
    if (all_excluded) {
      return {"tokenizer", CheckStatus::kSkip, "tokenizer files were excluded by the download's selection"};
    }
    for (const std::string& path : missing) {
      if (!inventory.is_excluded(path)) report.problems.push_back({path, "tokenizer", "missing"});
    }
    return {"tokenizer", CheckStatus::kFail, "tokenizer files are missing"};
  }
  return absent_upstream("tokenizer", "tokenizer", "no tokenizer files", settings);
}

}  // namespace hfget::verify
