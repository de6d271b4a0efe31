// SPDX-License-Identifier: MIT
// state.json, the run record: what the download holding the target lock writes every 2 s and once at its end,
// and what status and wait read. Its last version matters most when the disk is full (exit code 9 and the
// cause), so it is written into reserved space, and made to fit that space whatever a hostile repo's paths
// make of the character budgets below.
#include "hfget/run_record.hpp"

#include <algorithm>
#include <limits>

#include "run/record_json.hpp"
#include "util/reserved_record_file.hpp"

namespace hfget {
namespace {

constexpr std::size_t kRecordedPathChars = 512;
constexpr std::size_t kRecordedErrorChars = 4096;
constexpr std::size_t kShortenedTextChars = 64;
constexpr int kRecordDepth = 8;  // the record nests 3 deep (the files in flight); some room for later fields

std::string clipped(const std::string& text, std::size_t max_chars) {
  return text.size() <= max_chars ? text : text.substr(0, max_chars) + "...";
}

std::uint64_t bytes_left(const RunRecordFile& file) {
  return file.size - std::min(file.size, file.bytes_done);
}

nlohmann::json named_files(const std::vector<RunRecordFile>& in_flight) {
  std::vector<RunRecordFile> files = in_flight;
  std::stable_sort(files.begin(), files.end(),
                   [](const RunRecordFile& a, const RunRecordFile& b) { return bytes_left(a) > bytes_left(b); });
  nlohmann::json named = nlohmann::json::array();
  for (std::size_t i = 0; i < files.size() && i < kRunRecordNamedFiles; ++i) {
    named.push_back({{"path", clipped(files[i].path, kRecordedPathChars)},
                     {"size", files[i].size},
                     {"bytes_done", std::min(files[i].bytes_done, files[i].size)}});
  }
  return named;
}

template <typename T>
nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json as_json(const RunRecord& record) {
  nlohmann::json data = {
      {"pid", record.pid},
      {"state", record.state},
      {"exit_code", or_null(record.exit_code)},
      {"repo", record.repo},
      {"revision", record.revision},
      {"commit", record.commit},
      {"target", record.target},
      {"started_at", record.started_at},
      {"updated_at", record.updated_at},
      {"files_done", record.files_done},
      {"files_total", record.files_total},
      {"shards_done", record.shards_done},
      {"shards_total", record.shards_total},
      {"bytes_done", record.bytes_done},
      {"bytes_total", record.bytes_total},
      {"rate_bytes_per_second", record.rate_bytes_per_second},
      {"eta_seconds", or_null(record.eta_seconds)},
      {"last_error", clipped(record.last_error, kRecordedErrorChars)},
      {"in_flight", named_files(record.in_flight)},
      {"files_in_flight", record.files_in_flight},
  };
  if (!record.log_file.empty()) data["log_file"] = record.log_file;
  return data;
}

// The record as text that fits the reserved space: past it the write would need new space, which a full disk
// does not have. Budgets per field are counted in characters, but a repo's paths are hostile and may be all
// emoji, which ensure_ascii writes as 12 bytes each: shed the named files in flight, then shorten the texts.
std::string fitted(nlohmann::json& data, std::size_t capacity) {
  std::string text = run::record_text(data, 1);
  nlohmann::json& in_flight = data["in_flight"];
  while (text.size() >= capacity && in_flight.is_array() && !in_flight.empty()) {
    in_flight.erase(in_flight.size() - 1);
    text = run::record_text(data, 1);
  }
  for (const char* field : {"last_error", "target", "log_file", "repo", "revision", "commit"}) {
    if (text.size() < capacity) break;
    const auto value = data.find(field);
    if (value != data.end() && value->is_string()) *value = clipped(value->get<std::string>(), kShortenedTextChars);
    text = run::record_text(data, 1);
  }
  return text;
}

std::vector<RunRecordFile> files_in(const nlohmann::json& data) {
  std::vector<RunRecordFile> files;
  const auto in_flight = data.find("in_flight");
  if (in_flight == data.end() || !in_flight->is_array()) return files;
  for (const nlohmann::json& file : *in_flight) {
    if (!file.is_object()) continue;
    std::optional<std::string> path = run::string_field(file, "path");
    if (!path) continue;
    files.push_back({std::move(*path), run::count_field(file, "size").value_or(0),
                     run::count_field(file, "bytes_done").value_or(0)});
  }
  return files;
}

std::optional<int> exit_code_in(const nlohmann::json& data) {
  const std::optional<long> code = run::integer_field(data, "exit_code");
  if (!code || *code < std::numeric_limits<int>::min() || *code > std::numeric_limits<int>::max()) return std::nullopt;
  return static_cast<int>(*code);
}

}  // namespace

std::filesystem::path run_record_path(const std::filesystem::path& state_dir) {
  return state_dir / "state.json";
}

void write_run_record(const std::filesystem::path& path, const RunRecord& record) {
  nlohmann::json data = as_json(record);
  util::ReservedRecordFile(path).write(fitted(data, util::ReservedRecordFile::kDefaultCapacity));
}

std::optional<RunRecord> read_run_record(const std::filesystem::path& path) {
  const std::optional<nlohmann::json> data = run::read_record_object(path, kRecordDepth);
  if (!data) return std::nullopt;
  const std::optional<long> pid = run::integer_field(*data, "pid");
  std::optional<std::string> state = run::string_field(*data, "state");
  if (!pid || !state) return std::nullopt;
  const auto text = [&](const char* key) { return run::string_field(*data, key).value_or(""); };
  const auto count = [&](const char* key) { return run::count_field(*data, key).value_or(0); };
  RunRecord record;
  record.pid = *pid;
  record.state = std::move(*state);
  record.exit_code = exit_code_in(*data);
  record.repo = text("repo");
  record.revision = text("revision");
  record.commit = text("commit");
  record.target = text("target");
  record.started_at = text("started_at");
  record.updated_at = text("updated_at");
  record.files_done = count("files_done");
  record.files_total = count("files_total");
  record.shards_done = count("shards_done");
  record.shards_total = count("shards_total");
  record.bytes_done = count("bytes_done");
  record.bytes_total = count("bytes_total");
  record.rate_bytes_per_second = run::number_field(*data, "rate_bytes_per_second").value_or(0);
  record.eta_seconds = run::number_field(*data, "eta_seconds");
  record.last_error = text("last_error");
  record.in_flight = files_in(*data);
  record.files_in_flight = count("files_in_flight");
  record.log_file = text("log_file");
  record.as_written = run::record_text(*data, -1);
  return record;
}

}  // namespace hfget
