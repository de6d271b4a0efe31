// SPDX-License-Identifier: MIT
// What the progress events count as a shard. It is a rule about file names for the plan summary and the
// "shards done" counter, so it lives with the progress interface that names it, not with file selection.
#include "hfget/progress.hpp"

namespace hfget {

bool is_weight_file(std::string_view path) noexcept {
  const auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() && path.substr(path.size() - suffix.size()) == suffix;
  };
  if (ends_with(".safetensors") || ends_with(".gguf")) return true;
  // .bin and .pt are also used for small non-weight files; count them only as PyTorch checkpoints.
  const std::size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const bool pickled = ends_with(".bin") || ends_with(".pt") || ends_with(".pth");
  return pickled && (name.starts_with("pytorch_model") || name.find("-of-") != std::string_view::npos);
}

std::string_view to_string(TransferPath path) noexcept {
  return path == TransferPath::kXet ? "xet" : "bridge";
}

}  // namespace hfget
