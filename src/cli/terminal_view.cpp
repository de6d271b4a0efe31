// SPDX-License-Identifier: MIT
// A block of lines redrawn in place with two escape sequences only (cursor to the start of the line N lines
// up, clear to the end of the screen), which every terminal emulator in use understands. No colours.
#include <fmt/format.h>

#include "cli/progress_views.hpp"
#include "util/byte_size.hpp"

namespace hfget::cli {
namespace {

constexpr std::size_t kMaxFileLines = 8;
constexpr std::size_t kMaxPathColumns = 60;

std::string shorten(const std::string& path) {
  if (path.size() <= kMaxPathColumns) return path;
  return "…" + path.substr(path.size() - (kMaxPathColumns - 1));
}

class TerminalView final : public ProgressView {
 public:
  explicit TerminalView(std::FILE* terminal) : out_(terminal) {}

  std::chrono::milliseconds period() const override { return std::chrono::milliseconds(250); }

  void tick(const ProgressSnapshot& snapshot) override {
    if (!snapshot.planned) return;
    std::string block = erase_block();
    block += status_line(snapshot) + "\n";
    std::size_t lines = 1;
    for (std::size_t i = 0; i < snapshot.active.size() && i < kMaxFileLines; ++i) {
      const ActiveFile& file = snapshot.active[i];
      const double percent =
          file.size > 0 ? 100.0 * static_cast<double>(file.done) / static_cast<double>(file.size) : 100.0;
      block += fmt::format("  {:<60} {:>10} / {:<10} {:5.1f}%\n", shorten(file.path),
                           util::format_binary_bytes(file.done), util::format_binary_bytes(file.size), percent);
      ++lines;
    }
    if (snapshot.active.size() > kMaxFileLines) {
      block += fmt::format("  … and {} more\n", snapshot.active.size() - kMaxFileLines);
      ++lines;
    }
    std::fputs(block.c_str(), out_);
    std::fflush(out_);
    drawn_lines_ = lines;
  }

  void event(const ProgressEvent& event, const ProgressSnapshot& snapshot) override {
    std::string line;
    switch (event.kind) {
      case ProgressEvent::Kind::kWaiting:
        line = fmt::format("another hfget{} is downloading into this target; waiting for it to finish",
                           event.holder_pid ? fmt::format(" (PID {})", *event.holder_pid) : "");
        break;
      case ProgressEvent::Kind::kPlan:
        line = fmt::format("commit {}: {} files ({} shards), {}; {} still to fetch", snapshot.commit.substr(0, 12),
                           snapshot.files_total, snapshot.shards_total, util::format_bytes_both(snapshot.bytes_total),
                           util::format_bytes_both(snapshot.bytes_total - snapshot.bytes_done));
        break;
      case ProgressEvent::Kind::kRetry:
        line =
            fmt::format("{}: {}; retry {} in {:.1f}s", event.path, event.message, event.attempt, event.delay_seconds);
        break;
      case ProgressEvent::Kind::kFileFailed: line = "FAILED " + event.message; break;
      case ProgressEvent::Kind::kFilePath:
        if (event.message.rfind("fell back", 0) != 0) return;
        line = fmt::format("{}: {}", event.path, event.message);
        break;
      case ProgressEvent::Kind::kFileStarted:
      case ProgressEvent::Kind::kFileDone:
      case ProgressEvent::Kind::kConnections: return;  // the live block shows these
    }
    // Printed above the block; the next tick redraws the block below it.
    std::fputs((erase_block() + line + "\n").c_str(), out_);
    std::fflush(out_);
    drawn_lines_ = 0;
  }

  void finish(const ProgressSnapshot& snapshot, const ProgressOutcome& outcome) override {
    std::string text = erase_block();
    if (snapshot.planned) text += status_line(snapshot) + "\n";
    std::fputs(text.c_str(), out_);
    std::fflush(out_);
    drawn_lines_ = 0;
    static_cast<void>(outcome);
  }

 private:
  std::string erase_block() const {
    if (drawn_lines_ == 0) return "";
    return fmt::format("\033[{}F\033[J", drawn_lines_);
  }

  std::FILE* out_;
  std::size_t drawn_lines_ = 0;
};

}  // namespace

std::unique_ptr<ProgressView> make_terminal_view(std::FILE* terminal) {
  return std::make_unique<TerminalView>(terminal);
}

}  // namespace hfget::cli
