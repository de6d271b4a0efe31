// SPDX-License-Identifier: MIT
#include "io/file_reads.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "hfget/error.hpp"
#include "support/temp_dir.hpp"

namespace hfget::io {
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

Fed read_whole(const std::filesystem::path& path, std::size_t window_bytes, ReadMethodChooser& chooser) {
  Fed fed;
  // Room for everything first: the consumer runs under the SIGBUS guard and must not reallocate while
  // reading.
  fed.bytes.reserve(std::filesystem::file_size(path));
  fed.spans.reserve(fed.bytes.capacity() / kPage + 2);
  read_file(
      path,
      [&](std::span<const std::byte> bytes) {
        fed.bytes.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        fed.spans.push_back(bytes.size());
      },
      chooser, window_bytes);
  return fed;
}

// Every test runs once with each method forced; what the consumer is fed must not depend on the method,
// except for how the bytes are cut into spans.
class ReadFile : public ::testing::TestWithParam<ReadMethod> {
 protected:
  Fed read_whole(const std::filesystem::path& path, std::size_t window_bytes) {
    return io::read_whole(path, window_bytes, chooser_);
  }
  // The spans one window of `length` bytes arrives in.
  std::vector<std::size_t> spans_of_window(std::size_t length) const {
    const std::size_t piece = GetParam() == ReadMethod::kMapped ? kMappedPieceBytes : kCopyBlockBytes;
    std::vector<std::size_t> spans(length / piece, piece);
    if (length % piece != 0) spans.push_back(length % piece);
    return spans;
  }

  ReadMethodChooser chooser_{GetParam()};
};

INSTANTIATE_TEST_SUITE_P(EachMethod, ReadFile, ::testing::Values(ReadMethod::kMapped, ReadMethod::kCopied),
                         [](const ::testing::TestParamInfo<ReadMethod>& param) {
                           return param.param == ReadMethod::kMapped ? "Mapped" : "Copied";
                         });

TEST_P(ReadFile, FeedsExactlyTheFileForEverySizeAroundTheWindow) {
  const TempDir dir;
  const std::size_t window = 4 * kPage;
  for (const std::size_t size : {std::size_t{0}, std::size_t{1}, window - 1, window, window + 1, 3 * window + 17}) {
    SCOPED_TRACE(size);
    const std::string content = patterned(size);
    write_file(dir / "f", content);
    const Fed fed = read_whole(dir / "f", window);
    EXPECT_EQ(fed.bytes, content);
    EXPECT_EQ(fed.spans.size(), (size + window - 1) / window);  // the window is smaller than a copy block
    for (const std::size_t span : fed.spans) EXPECT_LE(span, window);
  }
}

TEST_P(ReadFile, RoundsTheWindowUpToWholePages) {
  const TempDir dir;
  const std::string content = patterned(2 * kPage + 3);
  write_file(dir / "f", content);
  const Fed fed = read_whole(dir / "f", 1000);
  EXPECT_EQ(fed.bytes, content);
  EXPECT_EQ(fed.spans, (std::vector<std::size_t>{kPage, kPage, 3}));
}

TEST_P(ReadFile, TheDefaultWindowReadsAFileLargerThanOneWindow) {
  const TempDir dir;
  const std::string content = patterned(kReadWindowBytes + 12345);
  write_file(dir / "f", content);
  const Fed fed = read_whole(dir / "f", kReadWindowBytes);
  EXPECT_TRUE(fed.bytes == content);  // not EXPECT_EQ: a mismatch would print 16 MiB
  std::vector<std::size_t> expected = spans_of_window(kReadWindowBytes);
  expected.push_back(12345);
  EXPECT_EQ(fed.spans, expected);
}

TEST_P(ReadFile, AMissingFileIsAnErrorNamingIt) {
  const TempDir dir;
  try {
    read_file(
        dir / "missing", [](std::span<const std::byte>) {}, chooser_);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find((dir / "missing").string()), std::string::npos) << error.what();
    EXPECT_EQ(error.file(), dir / "missing");
  }
}

TEST_P(ReadFile, AFileTruncatedWhileReadIsAnErrorNamingItNotACrash) {
  const TempDir dir;
  const std::size_t window = 4 * kPage;
  write_file(dir / "f", patterned(3 * window));
  int calls = 0;
  unsigned sum = 0;
  try {
    read_file(
        dir / "f",
        [&](std::span<const std::byte> bytes) {
          ++calls;
          std::filesystem::resize_file(dir / "f", 0);  // another process truncates it under us
          // Mapped: SIGBUS on the first byte.
          for (const std::byte b : bytes) sum += static_cast<unsigned>(b);
        },
        chooser_, window);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kVerificationFailed);
    EXPECT_EQ(error.file(), dir / "f");
    const std::string message = error.what();
    EXPECT_NE(message.find((dir / "f").string()), std::string::npos) << message;
    EXPECT_NE(message.find("changed or truncated while being read"), std::string::npos) << message;
  }
  EXPECT_EQ(calls, 1);
  if (GetParam() == ReadMethod::kMapped) {
    EXPECT_EQ(sum, 0U);  // copied, the first window was read before the truncation
  }
  // The guard is disarmed and the process fine: the next file reads normally.
  write_file(dir / "g", patterned(window + 1));
  EXPECT_EQ(read_whole(dir / "g", window).bytes, patterned(window + 1));
}

// Mapped, the reader itself touches pages ahead of the consumer: one past the new end faults there, inside
// the guard too.
TEST_P(ReadFile, AFileTruncatedInTheMiddleOfAWindowIsAnErrorNamingIt) {
  const TempDir dir;
  const std::size_t window = 1 << 20;
  write_file(dir / "f", patterned(2 * window));
  int calls = 0;
  try {
    read_file(
        dir / "f",
        [&](std::span<const std::byte>) {
          if (++calls == 1) std::filesystem::resize_file(dir / "f", kPage);
        },
        chooser_, window);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kVerificationFailed) << error.what();
    EXPECT_EQ(error.file(), dir / "f");
  }
  EXPECT_EQ(calls, 1);
}

TEST_P(ReadFile, AnExceptionFromTheConsumerPropagates) {
  const TempDir dir;
  write_file(dir / "f", patterned(3 * kPage));
  int calls = 0;
  EXPECT_THROW(read_file(
                   dir / "f",
                   [&](std::span<const std::byte>) {
                     ++calls;
                     throw Error(ErrorCode::kInterrupted, "interrupted");
                   },
                   chooser_, kPage),
               Error);
  EXPECT_EQ(calls, 1);
}

// The shared chooser measures the windows as it goes and mixes the methods within one file; the consumer
// still gets the file in order.
TEST(ReadFileChoosing, MixingMethodsWithinAFileFeedsItInOrder) {
  const TempDir dir;
  const std::size_t window = ReadMethodChooser::kMeasuredWindowBytes;  // the chooser alternates, then settles
  const std::string content = patterned(6 * window + 5);
  write_file(dir / "f", content);
  ReadMethodChooser chooser;
  const Fed fed = read_whole(dir / "f", window, chooser);
  EXPECT_TRUE(fed.bytes == content);
  EXPECT_GT(fed.spans.size(), 7U);  // the second window at least was copied, in blocks
}

TEST(ReadFileChoosing, AShortFileIsCopiedNotMapped) {
  const TempDir dir;
  const std::string content = patterned(3 * kCopyBlockBytes + 5);  // shorter than a measured window
  write_file(dir / "f", content);
  ReadMethodChooser chooser;
  const Fed fed = read_whole(dir / "f", kReadWindowBytes, chooser);
  EXPECT_EQ(fed.bytes, content);
  EXPECT_EQ(fed.spans, (std::vector<std::size_t>{kCopyBlockBytes, kCopyBlockBytes, kCopyBlockBytes, 5}));
}

}  // namespace
}  // namespace hfget::io
