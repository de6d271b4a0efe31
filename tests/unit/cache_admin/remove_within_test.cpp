// SPDX-License-Identifier: MIT
#include "cache_admin/remove_within.hpp"

#include <gtest/gtest.h>

#include "cache_admin/cache_fixture.hpp"
#include "hfget/error.hpp"
#include "support/temp_dir.hpp"

namespace hfget::cache_admin {
namespace {

using test_support::TempDir;
using test_support::write_file;

TEST(IsWithin, ComparesNormalisedPaths) {
  EXPECT_TRUE(is_within("/a/b", "/a/b/c"));
  EXPECT_TRUE(is_within("/a/b", "/a/b"));
  EXPECT_FALSE(is_within("/a/b", "/a/b/../c"));
  EXPECT_FALSE(is_within("/a/b", "/a/bc"));
}

TEST(RemoveWithin, RemovesATreeAndCountsItsBytes) {
  const TempDir root;
  write_file(root / "t" / "a", "12345");
  write_file(root / "t" / "sub" / "b", "123");
  EXPECT_EQ(remove_within(root.path(), root / "t"), 8u);
  EXPECT_FALSE(std::filesystem::exists(root / "t"));
}

TEST(RemoveWithin, RemovesASymlinkNotItsTarget) {
  const TempDir dir;
  write_file(dir / "target" / "keep", "data");
  std::filesystem::create_directories(dir / "root");
  std::filesystem::create_directory_symlink(dir / "target", dir / "root" / "link");
  EXPECT_EQ(remove_within(dir / "root", dir / "root" / "link"), 0u);
  EXPECT_TRUE(std::filesystem::exists(dir / "target" / "keep"));
}

TEST(RemoveWithin, RefusesAPathOutsideTheRootOrTheRootItself) {
  const TempDir dir;
  write_file(dir / "other" / "keep", "data");
  EXPECT_THROW(remove_within(dir / "root", dir / "other"), Error);
  EXPECT_THROW(remove_within(dir / "root", dir / "root" / ".." / "other"), Error);
  EXPECT_THROW(remove_within(dir / "other", dir / "other"), Error);
  EXPECT_TRUE(std::filesystem::exists(dir / "other" / "keep"));
}

TEST(RemoveWithin, RefusesAPathReachedThroughASymlinkedFolder) {
  const TempDir dir;
  write_file(dir / "target" / "keep", "data");
  std::filesystem::create_directories(dir / "root");
  std::filesystem::create_directory_symlink(dir / "target", dir / "root" / "link");
  EXPECT_THROW(remove_within(dir / "root", dir / "root" / "link" / "keep"), Error);
  EXPECT_TRUE(std::filesystem::exists(dir / "target" / "keep"));
}

TEST(RemoveWithin, AnAbsentPathIsNothingToDo) {
  const TempDir root;
  EXPECT_EQ(remove_within(root.path(), root / "missing" / "file"), 0u);
}

}  // namespace
}  // namespace hfget::cache_admin
