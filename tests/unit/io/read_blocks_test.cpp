// SPDX-License-Identifier: MIT
#include "io/read_blocks.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "hfget/error.hpp"
#include "support/temp_dir.hpp"
#include "util/unique_fd.hpp"

namespace hfget::io {
namespace {

class ReadBlocks : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 10'000; ++i) content_.push_back(static_cast<char>(i * 7));
    std::ofstream(path_, std::ios::binary) << content_;
    fd_ = util::UniqueFd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd_.valid());
  }

  BlockConsumer append_to(std::string& fed) {
    return [&fed](std::span<const std::byte> bytes) {
      fed.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    };
  }

  test_support::TempDir dir_;
  std::filesystem::path path_ = dir_ / "file";
  std::string content_;
  util::UniqueFd fd_;
};

TEST_F(ReadBlocks, FeedsTheRangeInBlocksOfTheBuffersSize) {
  std::string fed;
  std::size_t calls = 0;
  std::byte buffer[1000];
  const std::uint64_t reached =
      read_through(fd_.get(), 500, 4500, buffer, path_, [&](std::span<const std::byte> bytes) {
        EXPECT_LE(bytes.size(), sizeof buffer);
        ++calls;
        append_to(fed)(bytes);
      });
  EXPECT_EQ(reached, 4500U);
  EXPECT_EQ(fed, content_.substr(500, 4000));
  EXPECT_EQ(calls, 4U);
}

TEST_F(ReadBlocks, ReadThroughStopsWhereAShortFileEnds) {
  std::string fed;
  std::byte buffer[4096];
  EXPECT_EQ(read_through(fd_.get(), 9000, 12'000, buffer, path_, append_to(fed)), 10'000U);
  EXPECT_EQ(fed, content_.substr(9000));
}

TEST_F(ReadBlocks, ReadBlocksReportsAShortFileAsAnErrorNamingIt) {
  std::string fed;
  read_blocks(fd_.get(), 0, 10'000, path_, append_to(fed), 3000);
  EXPECT_EQ(fed, content_);
  try {
    read_blocks(fd_.get(), 0, 10'001, path_, append_to(fed), 3000);
    FAIL() << "a file shorter than the range must throw";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(path_.string()), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace hfget::io
