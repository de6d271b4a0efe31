// SPDX-License-Identifier: MIT
#include "store/mapped_reads.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "hfget/error.hpp"
#include "support/temp_dir.hpp"

namespace hfget::store {
namespace {

using test_support::TempDir;

const std::size_t kPage = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

// Bytes that differ from page to page and within one, so a window fed twice or out of order shows.
std::string patterned(std::size_t size) {
  std::string content(size, '\0');
  for (std::size_t i = 0; i < size; ++i) content[i] = static_cast<char>((i * 131 + i / 4093) & 0xff);
  return content;
}

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

struct Fed {
  std::string bytes;
  std::vector<std::size_t> spans;  // the size of each span the consumer got
};

Fed read_mapped(const std::filesystem::path& path, std::size_t window_bytes) {
  Fed fed;
  // Room for everything first: the consumer runs under the SIGBUS guard and must not reallocate while
  // reading.
  fed.bytes.reserve(std::filesystem::file_size(path));
  fed.spans.reserve(fed.bytes.capacity() / kPage + 2);
  read_file_mapped(
      path,
      [&](std::span<const std::byte> bytes) {
        fed.bytes.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        fed.spans.push_back(bytes.size());
      },
      window_bytes);
  return fed;
}

TEST(ReadFileMapped, FeedsExactlyTheFileForEverySizeAroundTheWindow) {
  const TempDir dir;
  const std::size_t window = 4 * kPage;
  for (const std::size_t size :
       {std::size_t{0}, std::size_t{1}, window - 1, window, window + 1, 3 * window + 17}) {
    SCOPED_TRACE(size);
    const std::string content = patterned(size);
    write_file(dir / "f", content);
    const Fed fed = read_mapped(dir / "f", window);
    EXPECT_EQ(fed.bytes, content);
    EXPECT_EQ(fed.spans.size(), (size + window - 1) / window);
    for (const std::size_t span : fed.spans) EXPECT_LE(span, window);
  }
}

TEST(ReadFileMapped, RoundsTheWindowUpToWholePages) {
  const TempDir dir;
  const std::string content = patterned(2 * kPage + 3);
  write_file(dir / "f", content);
  const Fed fed = read_mapped(dir / "f", 1000);
  EXPECT_EQ(fed.bytes, content);
  EXPECT_EQ(fed.spans, (std::vector<std::size_t>{kPage, kPage, 3}));
}

TEST(ReadFileMapped, TheDefaultWindowReadsAFileLargerThanOneWindow) {
  const TempDir dir;
  const std::string content = patterned(kMappedWindowBytes + 12345);
  write_file(dir / "f", content);
  const Fed fed = read_mapped(dir / "f", kMappedWindowBytes);
  EXPECT_TRUE(fed.bytes == content);  // not EXPECT_EQ: a mismatch would print 16 MiB
  EXPECT_EQ(fed.spans, (std::vector<std::size_t>{kMappedWindowBytes, 12345}));
}

TEST(ReadFileMapped, AMissingFileIsAnErrorNamingIt) {
  const TempDir dir;
  try {
    read_file_mapped(dir / "missing", [](std::span<const std::byte>) {});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find((dir / "missing").string()), std::string::npos) << error.what();
    EXPECT_EQ(error.file(), dir / "missing");
  }
}

TEST(ReadFileMapped, AFileTruncatedWhileMappedIsAnErrorNamingItNotACrash) {
  const TempDir dir;
  const std::size_t window = 4 * kPage;
  write_file(dir / "f", patterned(3 * window));
  int calls = 0;
  unsigned sum = 0;
  try {
    read_file_mapped(
        dir / "f",
        [&](std::span<const std::byte> bytes) {
          ++calls;
          std::filesystem::resize_file(dir / "f", 0);  // another process truncates it under us
          for (const std::byte b : bytes) sum += static_cast<unsigned>(b);  // SIGBUS on the first byte
        },
        window);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kVerificationFailed);
    EXPECT_EQ(error.file(), dir / "f");
    const std::string message = error.what();
    EXPECT_NE(message.find((dir / "f").string()), std::string::npos) << message;
    EXPECT_NE(message.find("changed or truncated while being read"), std::string::npos) << message;
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(sum, 0U);
  // The guard is disarmed and the process fine: the next file reads normally.
  write_file(dir / "g", patterned(window + 1));
  EXPECT_EQ(read_mapped(dir / "g", window).bytes, patterned(window + 1));
}

TEST(ReadFileMapped, AnExceptionFromTheConsumerPropagates) {
  const TempDir dir;
  write_file(dir / "f", patterned(3 * kPage));
  int calls = 0;
  EXPECT_THROW(read_file_mapped(
                   dir / "f",
                   [&](std::span<const std::byte>) {
                     ++calls;
                     throw Error(ErrorCode::kInterrupted, "interrupted");
                   },
                   kPage),
               Error);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace hfget::store
