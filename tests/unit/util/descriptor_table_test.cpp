// SPDX-License-Identifier: MIT
#include "util/descriptor_table.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace hfget::util {
namespace {

// The size of this process's descriptor table, as the kernel reports it.
long descriptor_table_size() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("FDSize:", 0) == 0) return std::stol(line.substr(7));
  }
  return -1;
}

long open_descriptors() {
  return static_cast<long>(
      std::distance(std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator()));
}

TEST(DescriptorTable, IsGrownToTheRoomOfTheLimitAndKeepsNoDescriptorOpen) {
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  const long room = static_cast<long>(std::min<rlim_t>(limit.rlim_cur, 1024));
  const long open_before = open_descriptors();
  reserve_descriptor_table();
  EXPECT_GE(descriptor_table_size(), room);
  EXPECT_EQ(open_descriptors(), open_before) << "the descriptors that grew the table are closed";
  reserve_descriptor_table();  // again: harmless
  EXPECT_EQ(open_descriptors(), open_before);
}

}  // namespace
}  // namespace hfget::util
