// SPDX-License-Identifier: MIT
#include "verify/safetensors_header.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "support/temp_dir.hpp"

namespace hfget::verify {
namespace {

using test_support::TempDir;

// Checks `json` as the header of a file whose data region has `data_bytes` bytes.
HeaderCheck check(const std::string& json, std::uint64_t data_bytes) {
  return check_safetensors_header(json.size(), json, 8 + json.size() + data_bytes);
}

// Asserts the header is refused and returns the problem.
std::string problem_of(const std::string& json, std::uint64_t data_bytes) {
  const HeaderCheck result = check(json, data_bytes);
  EXPECT_FALSE(result.header) << json;
  EXPECT_FALSE(result.problem.empty()) << json;
  return result.problem;
}

const std::string kTwoTensors = R"({"b": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [8, 16]},)"
                                R"( "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})";

TEST(DtypeBits, KnowsTheSafetensorsDtypes) {
  EXPECT_EQ(dtype_bits("BF16"), 16U);
  EXPECT_EQ(dtype_bits("F16"), 16U);
  EXPECT_EQ(dtype_bits("F32"), 32U);
  EXPECT_EQ(dtype_bits("I64"), 64U);
  EXPECT_EQ(dtype_bits("BOOL"), 8U);
  EXPECT_EQ(dtype_bits("F8_E4M3"), 8U);
  EXPECT_EQ(dtype_bits("F4"), 4U);
  EXPECT_EQ(dtype_bits("C128"), 128U);
}

TEST(DtypeBits, IsNulloptForUnknownOrMiscasedNames) {
  EXPECT_EQ(dtype_bits("bf16"), std::nullopt);
  EXPECT_EQ(dtype_bits("F128"), std::nullopt);
  EXPECT_EQ(dtype_bits(""), std::nullopt);
}

TEST(SafetensorsHeader, AcceptsAWellFormedHeaderAndSortsTensorsByOffset) {
  const HeaderCheck result = check(kTwoTensors, 16);
  ASSERT_TRUE(result.header) << result.problem;
  EXPECT_EQ(result.header->header_length, kTwoTensors.size());
  EXPECT_EQ(result.header->data_length, 16U);
  EXPECT_EQ(result.header->tensor_bytes(), 16U);
  ASSERT_EQ(result.header->tensors.size(), 2U);
  EXPECT_EQ(result.header->name_of(result.header->tensors[0]), "a");
  EXPECT_EQ(result.header->tensors[0].dtype, Dtype::kF32);
  EXPECT_EQ(result.header->tensors[0].begin, 0U);
  EXPECT_EQ(result.header->tensors[0].end, 8U);
  EXPECT_EQ(result.header->name_of(result.header->tensors[1]), "b");
  EXPECT_EQ(result.header->tensors[1].dtype, Dtype::kBF16);
  EXPECT_EQ(result.header->tensors[1].begin, 8U);
  EXPECT_EQ(result.header->tensors[1].end, 16U);
}

TEST(SafetensorsHeader, AcceptsMetadataAndSpacePadding) {
  const std::string json =
      R"({"__metadata__": {"format": "pt"}, "a": {"dtype": "U8", "shape": [3], "data_offsets": [0, 3]}}    )";
  const HeaderCheck result = check(json, 3);
  ASSERT_TRUE(result.header) << result.problem;
  EXPECT_EQ(result.header->tensors.size(), 1U);
}

TEST(SafetensorsHeader, AcceptsAnEmptyHeaderWithNoData) {
  const HeaderCheck result = check("{}", 0);
  ASSERT_TRUE(result.header) << result.problem;
  EXPECT_TRUE(result.header->tensors.empty());
}

TEST(SafetensorsHeader, AcceptsZeroLengthTensorsSharingAnOffset) {
  const std::string json = R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},)"
                           R"( "empty": {"dtype": "F32", "shape": [0, 5], "data_offsets": [4, 4]},)"
                           R"( "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})";
  const HeaderCheck result = check(json, 8);
  EXPECT_TRUE(result.header) << result.problem;
}

TEST(SafetensorsHeader, TreatsAnEmptyShapeAsAScalar) {
  EXPECT_TRUE(check(R"({"s": {"dtype": "I64", "shape": [], "data_offsets": [0, 8]}})", 8).header);
}

TEST(SafetensorsHeader, AcceptsSubByteDtypesThatFillWholeBytes) {
  EXPECT_TRUE(check(R"({"q": {"dtype": "F4", "shape": [2, 3], "data_offsets": [0, 3]}})", 3).header);
  EXPECT_TRUE(check(R"({"q": {"dtype": "F6_E2M3", "shape": [4], "data_offsets": [0, 3]}})", 3).header);
}

TEST(SafetensorsHeader, RejectsSubByteTensorsThatDoNotFillWholeBytes) {
  problem_of(R"({"q": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}})", 2);
}

TEST(SafetensorsHeader, RejectsAnUnknownDtype) {
  EXPECT_NE(problem_of(R"({"a": {"dtype": "F128", "shape": [1], "data_offsets": [0, 16]}})", 16).find("F128"),
            std::string::npos);
}

TEST(SafetensorsHeader, RejectsASpanThatDisagreesWithShapeAndDtype) {
  const std::string problem = problem_of(R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8);
  EXPECT_NE(problem.find("'w'"), std::string::npos) << problem;
}

TEST(SafetensorsHeader, RejectsMalformedTensorEntries) {
  for (const std::string& json : {
           std::string(R"({"a": 5})"),
           std::string(R"({"a": {"shape": [1], "data_offsets": [0, 1]}})"),
           std::string(R"({"a": {"dtype": "U8", "data_offsets": [0, 1]}})"),
           std::string(R"({"a": {"dtype": "U8", "shape": [1]}})"),
           std::string(R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0]}})"),
           std::string(R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [-1, 0]}})"),
           std::string(R"({"a": {"dtype": "U8", "shape": [-1], "data_offsets": [0, 1]}})"),
           std::string(R"({"a": {"dtype": "U8", "shape": [1.5], "data_offsets": [0, 1]}})"),
           std::string(R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [1, 0]}})"),
           std::string(R"({"__metadata__": [], "a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}})"),
       }) {
    problem_of(json, 1);
  }
}

TEST(SafetensorsHeader, RejectsAShapeTooLargeToAddress) {
  problem_of(R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296, 16], "data_offsets": [0, 0]}})", 0);
  problem_of(R"({"a": {"dtype": "C128", "shape": [4611686018427387904], "data_offsets": [0, 0]}})", 0);
}

TEST(SafetensorsHeader, RejectsATensorBeyondTheDataRegion) {
  const std::string problem = problem_of(kTwoTensors, 12);
  EXPECT_NE(problem.find("out of bounds"), std::string::npos) << problem;
}

TEST(SafetensorsHeader, RejectsOverlappingTensorSpans) {
  const std::string json = R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},)"
                           R"( "b": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}})";
  EXPECT_NE(problem_of(json, 6).find("overlap"), std::string::npos);
}

TEST(SafetensorsHeader, RejectsAGapBetweenTensors) {
  const std::string json = R"({"a": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]},)"
                           R"( "b": {"dtype": "U8", "shape": [2], "data_offsets": [4, 6]}})";
  EXPECT_NE(problem_of(json, 6).find("gap"), std::string::npos);
  problem_of(R"({"b": {"dtype": "U8", "shape": [2], "data_offsets": [1, 3]}})", 3);  // gap at the start
}

TEST(SafetensorsHeader, RejectsDataBeyondTheLastTensor) {
  problem_of(kTwoTensors, 17);
}

TEST(SafetensorsHeader, RejectsATruncatedFile) {
  EXPECT_FALSE(check_safetensors_header(0, "", 7).header);
  EXPECT_FALSE(check_safetensors_header(100, "", 50).header);
  const HeaderCheck short_json = check_safetensors_header(10, "{}", 100);
  EXPECT_FALSE(short_json.header);
  EXPECT_FALSE(short_json.problem.empty());
}

TEST(SafetensorsHeader, RejectsAnImplausibleHeaderLength) {
  EXPECT_FALSE(check_safetensors_header(200'000'000, "", 1'000'000'000).header);
}

TEST(SafetensorsHeader, RejectsAHeaderThatIsNotAJsonObject) {
  problem_of("[]", 0);
  problem_of("{", 0);
  problem_of("not json", 0);
}

TEST(SafetensorsHeader, RejectsATensorNamedTwice) {
  const std::string json = R"({"a": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]},)"
                           R"( "a": {"dtype": "U8", "shape": [2], "data_offsets": [2, 4]}})";
  EXPECT_NE(problem_of(json, 4).find("tensor 'a' appears twice"), std::string::npos);
}

TEST(SafetensorsHeader, ReadsTheLastOfARepeatedField) {
  EXPECT_TRUE(check(R"({"a": {"dtype": "F128", "shape": [9], "data_offsets": [5], "dtype": "U8", "shape": [2],)"
                    R"( "data_offsets": [0, 2]}})",
                    2)
                  .header);
}

TEST(SafetensorsHeader, IgnoresUnknownFieldsOfATensor) {
  const HeaderCheck result = check(R"({"a": {"dtype": "U8", "extra": {"b": [1, {"c": null}]}, "shape": [2],)"
                                   R"( "data_offsets": [0, 2], "dtype_note": "x"}})",
                                   2);
  ASSERT_TRUE(result.header) << result.problem;
  EXPECT_EQ(result.header->names, "a");
}

TEST(SafetensorsHeader, RejectsANestedDimension) {
  EXPECT_NE(problem_of(R"({"a": {"dtype": "U8", "shape": [[2]], "data_offsets": [0, 2]}})", 2).find("non-integer"),
            std::string::npos);
  problem_of(R"({"a": {"dtype": "U8", "shape": [2], "data_offsets": [[0], 2]}})", 2);
}

// Hostile headers (security issue 14): bounded memory and linear time, whatever the header holds.

std::string repeated(const std::string& unit, std::size_t count, const std::string& separator = ",") {
  std::string text;
  text.reserve((unit.size() + separator.size()) * count);
  for (std::size_t i = 0; i < count; ++i) text += (i == 0 ? "" : separator) + unit;
  return text;
}

TEST(SafetensorsHeader, RefusesDeepNestingAtOnce) {
  for (const std::string& json : {R"({"__metadata__": {"a": )" + std::string(10'000'000, '['),
                                  R"({"a": {"dtype": "U8", "x": )" + std::string(20, '[') + std::string(20, ']') + "}}",
                                  std::string(20, '[') + std::string(20, ']')}) {
    EXPECT_NE(problem_of(json, 0).find("nested more than 16 levels deep"), std::string::npos) << json.substr(0, 40);
  }
}

TEST(SafetensorsHeader, SkipsMetadataAndUnknownFields) {
  // A million empty objects where the format has none, and an 8 MB string: skipped, never stored.
  const std::string json = R"({"__metadata__": {"format": "pt", "junk": [)" + repeated("{}", 1'000'000) +
                           R"(]}, "a": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2], "note": ")" +
                           std::string(8 << 20, 'x') + R"("}})";
  const HeaderCheck result = check(json, 2);
  ASSERT_TRUE(result.header) << result.problem;
  EXPECT_EQ(result.header->tensors.size(), 1U);
  EXPECT_EQ(result.header->names, "a");
}

TEST(SafetensorsHeader, KeepsThirtyTwoBytesAndTheNamePerTensor) {
  // A header of 20 K tensors: 8 bytes of shape, spans, names, nothing else.
  constexpr std::size_t kTensors = 20'000;
  std::string json = "{";
  std::size_t name_bytes = 0;
  for (std::size_t i = 0; i < kTensors; ++i) {
    const std::string name = fmt::format("model.layers.{}.mlp.experts.{}.down_proj.weight", i / 1000, i % 1000);
    name_bytes += name.size();
    json += fmt::format(R"({}"{}": {{"dtype": "BF16", "shape": [2, 2], "data_offsets": [{}, {}]}})", i == 0 ? "" : ", ",
                        name, 8 * i, 8 * i + 8);
  }
  json += "}";
  const HeaderCheck result = check(json, 8 * kTensors);
  ASSERT_TRUE(result.header) << result.problem;
  EXPECT_EQ(result.header->tensors.size(), kTensors);
  EXPECT_EQ(result.header->names.size(), name_bytes);
  EXPECT_EQ(sizeof(TensorInfo), 32U);
}

TEST(SafetensorsHeader, ClipsAHugeNameInItsProblem) {
  const std::string name(4 << 20, 'n');
  const std::string problem = problem_of(R"({")" + name + R"(": {"dtype": ")" + name +
                                             R"(", "shape": [1],)"
                                             R"( "data_offsets": [0, 1]}})",
                                         1);
  EXPECT_LT(problem.size(), 1000U);
  EXPECT_NE(problem.find("unknown dtype"), std::string::npos) << problem;
}

std::string little_endian_prefix(std::uint64_t value) {
  std::string prefix(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) prefix[i] = static_cast<char>((value >> (8 * i)) & 0xFFU);
  return prefix;
}

TEST(ReadSafetensorsHeader, ReadsTheHeaderOfAFile) {
  const TempDir dir;
  std::ofstream(dir / "m.safetensors", std::ios::binary)
      << little_endian_prefix(kTwoTensors.size()) << kTwoTensors << std::string(16, '\x01');
  const HeaderCheck result = read_safetensors_header(dir / "m.safetensors");
  ASSERT_TRUE(result.header) << result.problem;
  EXPECT_EQ(result.header->tensors.size(), 2U);
}

TEST(ReadSafetensorsHeader, StreamsAHeaderLongerThanItsReadWindow) {
  // A 1 MB header is read in 64 KiB windows and parses exactly as from memory; the data region after it is
  // never read as JSON.
  const TempDir dir;
  const std::string json =
      R"({"__metadata__": {"pad": ")" + std::string(1 << 20, 'p') + R"("},)" + kTwoTensors.substr(1);
  std::ofstream(dir / "m.safetensors", std::ios::binary)
      << little_endian_prefix(json.size()) << json << std::string(16, '{');
  const HeaderCheck result = read_safetensors_header(dir / "m.safetensors");
  ASSERT_TRUE(result.header) << result.problem;
  EXPECT_EQ(result.header->tensors.size(), 2U);
  EXPECT_EQ(result.header->header_length, json.size());
  EXPECT_EQ(result.header->data_length, 16U);
  std::ofstream(dir / "bad.safetensors", std::ios::binary)
      << little_endian_prefix(json.size() - 1) << json << std::string(16, '{');
  EXPECT_EQ(read_safetensors_header(dir / "bad.safetensors").problem, "the header is not valid JSON");
}

TEST(ReadSafetensorsHeader, ReportsATruncatedFile) {
  const TempDir dir;
  std::ofstream(dir / "short", std::ios::binary) << "abc";
  EXPECT_FALSE(read_safetensors_header(dir / "short").header);
  std::ofstream(dir / "cut", std::ios::binary) << little_endian_prefix(kTwoTensors.size()) << kTwoTensors.substr(0, 10);
  EXPECT_FALSE(read_safetensors_header(dir / "cut").header);
  std::ofstream(dir / "huge", std::ios::binary) << little_endian_prefix(~std::uint64_t{0}) << "{}";
  EXPECT_FALSE(read_safetensors_header(dir / "huge").header);
}

TEST(ReadSafetensorsHeader, ReportsAMissingFile) {
  const TempDir dir;
  const HeaderCheck result = read_safetensors_header(dir / "missing");
  EXPECT_FALSE(result.header);
  EXPECT_FALSE(result.problem.empty());
}

}  // namespace
}  // namespace hfget::verify
