// SPDX-License-Identifier: MIT
#include "store/file_copy.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "hfget/error.hpp"
#include "support/temp_dir.hpp"

namespace hfget::store {
namespace {

using test_support::TempDir;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

TEST(FileCopy, CopiesEveryByteAndReplacesWhatWasThere) {
  TempDir dir;
  std::string content(3 << 20, '\0');  // several buffers' worth, with every byte value
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7 % 251);
  std::ofstream(dir / "from", std::ios::binary) << content;
  std::ofstream(dir / "to", std::ios::binary) << "old";
  copy_file_atomically(dir / "from", dir / "to");
  EXPECT_EQ(read_file(dir / "to"), content);
  EXPECT_EQ(read_file(dir / "from"), content);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 2U);  // no temporary left behind
}

TEST(FileCopy, CopiesAnEmptyFile) {
  TempDir dir;
  std::ofstream(dir / "from", std::ios::binary).flush();
  copy_file_atomically(dir / "from", dir / "to");
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "to"));
  EXPECT_EQ(std::filesystem::file_size(dir / "to"), 0U);
}

TEST(FileCopy, AMissingSourceIsAnErrorNamingItAndLeavesTheTargetAlone) {
  TempDir dir;
  std::ofstream(dir / "to", std::ios::binary) << "old";
  try {
    copy_file_atomically(dir / "missing", dir / "to");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("missing"), std::string::npos) << error.what();
  }
  EXPECT_EQ(read_file(dir / "to"), "old");
}

}  // namespace
}  // namespace hfget::store
