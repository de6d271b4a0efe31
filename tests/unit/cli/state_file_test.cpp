// SPDX-License-Identifier: MIT
#include "cli/state_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli/progress_tracker.hpp"
#include "cli/progress_views.hpp"

namespace hfget::cli {
namespace {

std::string emoji(std::size_t count) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) text += "\xF0\x9F\x98\x80";  // U+1F600: 12 bytes as a JSON escape pair
  return text;
}

// A hostile repo's paths can make the record far larger than its character budgets suggest; the record must
// still fit the space reserved for it, or a full disk loses the final record (status says "died").
TEST(StateFileView, ARecordOfEmojiPathsStillFitsItsReservedSpace) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("hfget-state-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = state_file_path(dir);
  std::unique_ptr<ProgressView> view = make_state_file_view(path, "org/" + emoji(90), "main", "/models/" + emoji(400),
                                                            "/logs/" + emoji(400), /*detached=*/true);
  ProgressSnapshot snapshot;
  snapshot.planned = true;
  for (int i = 0; i < 10; ++i) snapshot.active.push_back({emoji(500) + std::to_string(i), 100, 10});
  view->finish(snapshot, {9, "failed", "No space left on device: " + emoji(2000), ""});

  EXPECT_EQ(std::filesystem::file_size(path), 16u * 1024u) << "written into the reserved space, not around it";
  const std::optional<RunRecord> state = read_run_record(path);
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->state, "failed");
  EXPECT_EQ(state->exit_code, 9);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hfget::cli
