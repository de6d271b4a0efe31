// SPDX-License-Identifier: MIT
// The CAS's reconstruction answers, V1 and V2 (field names as in xet-core's openapi/cas.openapi.yaml): what a
// good answer parses to, and a table of hostile answers, each rejected with the field named.
#include "xet/reconstruction.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "xet/chunk_stream.hpp"

namespace hfget::xet {
namespace {

using Json = nlohmann::json;

const std::string kXorbA(64, 'a');
const std::string kXorbB = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

Json v1_answer() {
  return Json::parse(R"({
    "offset_into_first_range": 100,
    "terms": [
      {"hash": ")" + kXorbA +
                     R"(", "unpacked_length": 200000, "range": {"start": 0, "end": 4}},
      {"hash": ")" + kXorbB +
                     R"(", "unpacked_length": 5000, "range": {"start": 7, "end": 8}},
      {"hash": ")" + kXorbA +
                     R"(", "unpacked_length": 60000, "range": {"start": 1, "end": 2}}
    ],
    "fetch_info": {
      ")" + kXorbA + R"(": [{"range": {"start": 0, "end": 4}, "url": "https://cas.example/xorb/a?sig=1",
                              "url_range": {"start": 0, "end": 131071}}],
      ")" + kXorbB + R"(": [{"range": {"start": 5, "end": 9}, "url": "http://127.0.0.1:8/b",
                              "url_range": {"start": 4096, "end": 9999}, "extra": [1, {"x": null}]}]
    },
    "unknown_field": {"nested": [true]}
  })");
}

Json v2_answer() {
  return Json::parse(R"({
    "offset_into_first_range": 0,
    "terms": [
      {"hash": ")" + kXorbA +
                     R"(", "unpacked_length": 9000, "range": {"start": 5, "end": 7}},
      {"hash": ")" + kXorbA +
                     R"(", "unpacked_length": 4000, "range": {"start": 0, "end": 1}}
    ],
    "xorbs": {
      ")" + kXorbA + R"(": [{"url": "https://cas.example/xorb/a", "ranges": [
          {"chunks": {"start": 0, "end": 3}, "bytes": {"start": 0, "end": 1023}},
          {"chunks": {"start": 5, "end": 8}, "bytes": {"start": 2048, "end": 3071}}]}]
    }
  })");
}

TEST(XetReconstruction, ParsesV1) {
  const Reconstruction r = parse_reconstruction_v1(v1_answer().dump());
  EXPECT_EQ(r.offset_into_first_range, 100U);
  ASSERT_EQ(r.terms.size(), 3U);
  ASSERT_EQ(r.fetches.size(), 2U);
  EXPECT_EQ(r.data_bytes(), 265000U);
  for (const Term& term : r.terms) {
    const XorbFetch& fetch = r.fetches.at(term.fetch);
    EXPECT_EQ(fetch.xorb_hash, term.xorb_hash);
    EXPECT_LE(fetch.chunk_begin, term.chunk_begin);
    EXPECT_GE(fetch.chunk_end, term.chunk_end);
  }
  const XorbFetch& b = r.fetches.at(r.terms[1].fetch);
  EXPECT_EQ(b.url, "http://127.0.0.1:8/b");
  EXPECT_EQ(b.byte_begin, 4096U);
  EXPECT_EQ(b.byte_end, 10000U);  // url_range.end is inclusive
  EXPECT_EQ(b.chunk_begin, 5U);
  EXPECT_EQ(b.chunk_end, 9U);
  EXPECT_EQ(r.terms[1].chunk_begin, 7U);
  EXPECT_EQ(r.terms[1].chunk_end, 8U);
  EXPECT_EQ(r.terms[1].data_bytes, 5000U);
}

TEST(XetReconstruction, ParsesV2WithEachRangeAFetchOfItsOwn) {
  const Reconstruction r = parse_reconstruction_v2(v2_answer().dump());
  ASSERT_EQ(r.fetches.size(), 2U);
  EXPECT_EQ(r.fetches[0].url, r.fetches[1].url);
  EXPECT_EQ(r.fetches[1].byte_begin, 2048U);
  EXPECT_EQ(r.fetches[1].byte_end, 3072U);
  ASSERT_EQ(r.terms.size(), 2U);
  EXPECT_EQ(r.fetches[r.terms[0].fetch].chunk_begin, 5U);
  EXPECT_EQ(r.fetches[r.terms[1].fetch].chunk_begin, 0U);
  EXPECT_EQ(r.data_bytes(), 13000U);
}

TEST(XetReconstruction, EmptyFileHasNoTerms) {
  const Reconstruction r = parse_reconstruction_v2(R"({"offset_into_first_range": 0, "terms": [], "xorbs": {}})");
  EXPECT_TRUE(r.terms.empty());
  EXPECT_EQ(r.data_bytes(), 0U);
}

struct Hostile {
  const char* what;
  std::function<void(Json&)> change;
  const char* message;  // part of the error's text
};

void expect_rejected(const Json& good, const std::vector<Hostile>& cases,
                     const std::function<Reconstruction(std::string_view)>& parse) {
  for (const Hostile& c : cases) {
    Json answer = good;
    c.change(answer);
    try {
      parse(answer.dump());
      ADD_FAILURE() << c.what << " was accepted";
    } catch (const ReconstructionError& error) {
      EXPECT_NE(std::string(error.what()).find(c.message), std::string::npos) << c.what << ": " << error.what();
    }
  }
}

const std::string kAFetch = "/fetch_info/" + kXorbA + "/0";

TEST(XetReconstruction, RejectsHostileV1) {
  const auto at = [](const std::string& pointer) { return Json::json_pointer(pointer); };
  const std::vector<Hostile> cases = {
      {"no offset", [](Json& j) { j.erase("offset_into_first_range"); }, "offset_into_first_range is missing"},
      {"negative offset", [](Json& j) { j["offset_into_first_range"] = -1; }, "wrong type"},
      {"offset past the first term", [](Json& j) { j["offset_into_first_range"] = 200000; }, "first term"},
      {"no terms", [](Json& j) { j.erase("terms"); }, "terms is missing"},
      {"terms not an array", [](Json& j) { j["terms"] = Json::object(); }, "must be an array"},
      {"term not an object", [](Json& j) { j["terms"][0] = 5; }, "wrong type"},
      {"no fetch_info", [](Json& j) { j.erase("fetch_info"); }, "fetch_info is missing"},
      {"short hash", [](Json& j) { j["terms"][0]["hash"] = std::string(63, 'a'); }, "hash"},
      {"uppercase hash", [](Json& j) { j["terms"][0]["hash"] = std::string(64, 'A'); }, "hash"},
      {"hash a number", [](Json& j) { j["terms"][0]["hash"] = 7; }, "wrong type"},
      {"term without hash", [](Json& j) { j["terms"][0].erase("hash"); }, "term 0: hash is missing"},
      {"term without length", [](Json& j) { j["terms"][1].erase("unpacked_length"); }, "term 1: unpacked_length"},
      {"zero length", [](Json& j) { j["terms"][1]["unpacked_length"] = 0; }, "impossible"},
      {"length over 128 KiB a chunk", [](Json& j) { j["terms"][1]["unpacked_length"] = 131073; }, "impossible"},
      {"float length", [](Json& j) { j["terms"][1]["unpacked_length"] = 1.5; }, "wrong type"},
      {"empty term range", [](Json& j) { j["terms"][1]["range"]["end"] = 7; }, "empty or inverted"},
      {"inverted term range", [](Json& j) { j["terms"][1]["range"]["start"] = 9; }, "empty or inverted"},
      {"term range without end", [](Json& j) { j["terms"][1]["range"].erase("end"); }, "incomplete"},
      {"chunk index past u32", [](Json& j) { j["terms"][1]["range"]["end"] = 4294967296ULL; }, "largest chunk"},
      // A hostile CAS would otherwise size the client's per-chunk bookkeeping (4e9 chunks of one term).
      {"chunk index past a xorb's", [](Json& j) { j["terms"][1]["range"]["end"] = 70000; }, "largest chunk"},
      {"fetch longer than a xorb", [](Json& j) { j["fetch_info"][kXorbA][0]["url_range"]["end"] = 200ULL << 20; },
       "more than a xorb holds"},
      {"term no fetch covers",
       [](Json& j) {
         j["terms"][1]["range"] = {{"start", 8}, {"end", 10}};
       },
       "no fetch"},
      {"term of an unlisted xorb", [](Json& j) { j["terms"][1]["hash"] = std::string(64, 'c'); }, "no fetch"},
      {"bad key", [](Json& j) { j["fetch_info"]["xyz"] = Json::array(); }, "key"},
      {"fetch list not an array", [](Json& j) { j["fetch_info"][kXorbA] = Json::object(); }, "must be an array"},
      {"ftp url", [at](Json& j) { j[at(kAFetch + "/url")] = "ftp://cas.example/a"; }, "http(s)"},
      {"url with a space", [at](Json& j) { j[at(kAFetch + "/url")] = "https://cas.example/a b"; }, "http(s)"},
      {"url without host", [at](Json& j) { j[at(kAFetch + "/url")] = "https:///a"; }, "http(s)"},
      {"no url", [at](Json& j) { j[at(kAFetch)].erase("url"); }, "url is missing"},
      {"huge url", [at](Json& j) { j[at(kAFetch + "/url")] = "https://a/" + std::string(70000, 'x'); }, "longer"},
      {"no url_range", [at](Json& j) { j[at(kAFetch)].erase("url_range"); }, "byte range is missing"},
      {"inverted url_range", [at](Json& j) { j[at(kAFetch + "/url_range/start")] = 131072; }, "inverted"},
      {"url_range end at u64 max", [at](Json& j) { j[at(kAFetch + "/url_range/end")] = 18446744073709551615ULL; },
       "overflows"},
      {"url_range too short for its chunks", [at](Json& j) { j[at(kAFetch + "/url_range/end")] = 20; }, "cannot hold"},
      {"url_range too long for its chunks", [at](Json& j) { j[at(kAFetch + "/url_range/end")] = 4ULL * 300000; },
       "cannot hold"},
      {"no fetch chunk range", [at](Json& j) { j[at(kAFetch)].erase("range"); }, "chunk range is missing"},
      {"not JSON", [](Json& j) { j = "{"; }, "not a JSON object"},
      {"an array", [](Json& j) { j = Json::array(); }, "not a JSON object"},
  };
  expect_rejected(v1_answer(), cases, parse_reconstruction_v1);
}

TEST(XetReconstruction, RejectsHostileV2) {
  const std::string ranges = "/xorbs/" + kXorbA + "/0/ranges";
  const auto at = [](const std::string& pointer) { return Json::json_pointer(pointer); };
  const std::vector<Hostile> cases = {
      {"no xorbs", [](Json& j) { j.erase("xorbs"); }, "xorbs is missing"},
      {"V1 map instead",
       [](Json& j) {
         j["fetch_info"] = j["xorbs"];
         j.erase("xorbs");
       },
       "xorbs is missing"},
      {"no ranges", [&](Json& j) { j[at("/xorbs/" + kXorbA + "/0")].erase("ranges"); }, "no ranges"},
      {"empty ranges", [&](Json& j) { j[at(ranges)] = Json::array(); }, "no ranges"},
      {"range without bytes", [&](Json& j) { j[at(ranges + "/1")].erase("bytes"); }, "byte range is missing"},
      {"range without chunks", [&](Json& j) { j[at(ranges + "/1")].erase("chunks"); }, "chunk range is missing"},
      {"bytes a string", [&](Json& j) { j[at(ranges + "/1/bytes/end")] = "3071"; }, "wrong type"},
      {"term past the ranges", [](Json& j) { j["terms"][0]["range"]["end"] = 9; }, "no fetch"},
      {"term across two ranges", [](Json& j) { j["terms"][0]["range"]["start"] = 2; }, "no fetch"},
  };
  expect_rejected(v2_answer(), cases, parse_reconstruction_v2);
}

TEST(XetReconstruction, RejectsDuplicatesDepthAndSize) {
  const std::string body = v2_answer().dump();
  EXPECT_THROW(parse_reconstruction_v2(body.substr(0, body.size() - 1) + R"(, "terms": []})"), ReconstructionError);
  const std::string twice =
      R"({"offset_into_first_range": 0, "terms": [], "xorbs": {")" + kXorbA + R"(": [], ")" + kXorbA + R"(": []}})";
  EXPECT_THROW(parse_reconstruction_v2(twice), ReconstructionError);
  const std::string deep = R"({"offset_into_first_range": 0, "terms": [], "xorbs": {}, "x": )" + std::string(100, '[') +
                           std::string(100, ']') + "}";
  EXPECT_THROW(parse_reconstruction_v2(deep), ReconstructionError);
  EXPECT_THROW(parse_reconstruction_v2(body + " x"), ReconstructionError);
  EXPECT_THROW(parse_reconstruction_v2(std::string(64 * 1024 * 1024 + 1, ' ')), ReconstructionError);
}

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(HFGET_SOURCE_DIR) + "/tests/fixtures/xet/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A ranged reconstruction of the real fixture file (tests/fixtures/xet): the term's chunks [1, 4) of the xorb,
// fetched as chunks [1, 5), 10 bytes into the first term. Decoding the fetched bytes and keeping what the
// term and the offset say gives exactly that part of the writer's input.
TEST(XetReconstruction, AssemblesPartOfTheRealFixture) {
  const std::string xorb = read_fixture("xorb.bin");
  const std::string input = read_fixture("input.bin");
  const Json listing = Json::parse(read_fixture("chunks.json"));
  const Json& chunks = listing.at("chunks");
  const auto at = [&](std::size_t i, const char* field) { return chunks.at(i).at(field).get<std::uint64_t>(); };
  const std::uint64_t term_bytes = at(1, "data_bytes") + at(2, "data_bytes") + at(3, "data_bytes");
  const std::string hash = listing.at("xorb_hash").get<std::string>();
  const Json answer = {
      {"offset_into_first_range", 10},
      {"terms", {{{"hash", hash}, {"unpacked_length", term_bytes}, {"range", {{"start", 1}, {"end", 4}}}}}},
      {"xorbs",
       {{hash,
         {{{"url", "https://cas.example/xorb"},
           {"ranges",
            {{{"chunks", {{"start", 1}, {"end", 5}}},
              {"bytes",
               {{"start", at(1, "offset")}, {"end", at(4, "offset") + at(4, "serialized_bytes") - 1}}}}}}}}}}}};
  const Reconstruction r = parse_reconstruction_v2(answer.dump());
  ASSERT_EQ(r.terms.size(), 1U);
  const Term& term = r.terms[0];
  const XorbFetch& fetch = r.fetches.at(term.fetch);

  std::string assembled;
  ChunkStreamDecoder decoder([&](std::uint64_t index, std::span<const std::byte> data) {
    const std::uint64_t chunk = fetch.chunk_begin + index;
    if (chunk >= term.chunk_begin && chunk < term.chunk_end) {
      assembled.append(reinterpret_cast<const char*>(data.data()), data.size());
    }
  });
  std::vector<std::byte> fetched(fetch.byte_end - fetch.byte_begin);
  std::memcpy(fetched.data(), xorb.data() + fetch.byte_begin, fetched.size());
  decoder.feed(fetched);
  decoder.finish();
  EXPECT_EQ(decoder.chunks_decoded(), fetch.chunk_end - fetch.chunk_begin);
  ASSERT_EQ(assembled.size(), term.data_bytes);
  const std::uint64_t file_begin = at(0, "data_bytes") + r.offset_into_first_range;
  EXPECT_EQ(assembled.substr(r.offset_into_first_range), input.substr(file_begin, term_bytes - 10));
}

}  // namespace
}  // namespace hfget::xet
