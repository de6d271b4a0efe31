// SPDX-License-Identifier: MIT
#include "http/url.hpp"

#include <gtest/gtest.h>

namespace hfget::http {
namespace {

TEST(ParseUrl, SplitsSchemeHostAndPort) {
  const std::optional<UrlParts> parts = parse_url("http://127.0.0.1:8080/api/models/x?y=1");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->scheme, "http");
  EXPECT_EQ(parts->host, "127.0.0.1");
  EXPECT_EQ(parts->port, "8080");
}

TEST(ParseUrl, LeavesPortEmptyWhenNotGiven) {
  const std::optional<UrlParts> parts = parse_url("https://huggingface.co/gpt2/resolve/main/config.json");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->scheme, "https");
  EXPECT_EQ(parts->host, "huggingface.co");
  EXPECT_EQ(parts->port, "");
}

TEST(ParseUrl, LowercasesSchemeAndHost) {
  const std::optional<UrlParts> parts = parse_url("HTTPS://HuggingFace.CO/x");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->scheme, "https");
  EXPECT_EQ(parts->host, "huggingface.co");
}

TEST(ParseUrl, RejectsWhatIsNotAnAbsoluteUrl) {
  EXPECT_FALSE(parse_url(""));
  EXPECT_FALSE(parse_url("huggingface.co/x"));
  EXPECT_FALSE(parse_url("/api/models"));
  EXPECT_FALSE(parse_url("https://"));
  EXPECT_FALSE(parse_url("https://host:99999/"));
}

TEST(ResolveReference, ResolvesRelativePaths) {
  EXPECT_EQ(resolve_reference("https://h.co/a/b/c?x=1", "d"), std::optional<std::string>("https://h.co/a/b/d"));
  EXPECT_EQ(resolve_reference("https://h.co/a/b/c?x=1", "../d"), std::optional<std::string>("https://h.co/a/d"));
  EXPECT_EQ(resolve_reference("https://h.co/a/b/c", "?cursor=2"),
            std::optional<std::string>("https://h.co/a/b/c?cursor=2"));
}

TEST(ResolveReference, ResolvesAbsolutePathsAgainstTheBaseHost) {
  EXPECT_EQ(resolve_reference("http://127.0.0.1:8080/gpt2/resolve/main/x", "/api/resolve-cache/x"),
            std::optional<std::string>("http://127.0.0.1:8080/api/resolve-cache/x"));
}

TEST(ResolveReference, KeepsAnAbsoluteUrl) {
  EXPECT_EQ(resolve_reference("https://huggingface.co/a", "https://cdn-lfs.hf.co/repos/x?sig=1"),
            std::optional<std::string>("https://cdn-lfs.hf.co/repos/x?sig=1"));
}

TEST(ResolveReference, ResolvesANetworkPathReferenceWithTheBaseScheme) {
  EXPECT_EQ(resolve_reference("https://huggingface.co/a", "//cdn.example/x"),
            std::optional<std::string>("https://cdn.example/x"));
}

TEST(ResolveReference, IsNulloptForAnInvalidBase) {
  EXPECT_EQ(resolve_reference("not a url", "/x"), std::nullopt);
}

TEST(SameOrigin, IgnoresCaseAndDefaultPorts) {
  EXPECT_TRUE(same_origin("https://huggingface.co/a", "https://HUGGINGFACE.co:443/b"));
  EXPECT_TRUE(same_origin("http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b?x=1"));
}

TEST(SameOrigin, TellsOtherPortsAndSchemesApart) {
  EXPECT_FALSE(same_origin("http://127.0.0.1:8080/a", "http://127.0.0.1:9090/b"));
  EXPECT_FALSE(same_origin("https://hub.local/a", "http://hub.local/b")) << "never the token in cleartext";
}

TEST(SameOrigin, TellsDifferentHostsApart) {
  EXPECT_FALSE(same_origin("https://huggingface.co/a", "https://cdn-lfs.huggingface.co/a"));
  EXPECT_FALSE(same_origin("https://huggingface.co/a", "https://huggingface.co.evil.example/a"));
  EXPECT_FALSE(same_origin("http://127.0.0.1:8080/a", "http://localhost:8080/a"));
}

TEST(SameOrigin, IsNotFooledByUserinfo) {
  EXPECT_FALSE(same_origin("https://huggingface.co/a", "https://huggingface.co@evil.example/a"));
  EXPECT_FALSE(same_origin("https://huggingface.co/a", "https://huggingface.co:pw@evil.example/a"));
}

TEST(SameOrigin, IsFalseWhenEitherUrlIsInvalid) {
  EXPECT_FALSE(same_origin("https://huggingface.co/a", "garbage"));
  EXPECT_FALSE(same_origin("", ""));
}

TEST(OriginOf, SpellsOutTheDefaultPortSoEqualOriginsCompareEqual) {
  EXPECT_EQ(origin_of("https://CDN.example/a?sig=1"), "https://cdn.example:443");
  EXPECT_EQ(origin_of("http://127.0.0.2:8081/blob"), "http://127.0.0.2:8081");
  EXPECT_EQ(origin_of("not a url"), "");
}

}  // namespace
}  // namespace hfget::http
