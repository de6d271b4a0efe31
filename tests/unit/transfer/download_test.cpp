// SPDX-License-Identifier: MIT
// download() as a whole, without sockets: every request (the Hub's revision and tree, each file's resolve,
// the CDN's ranges) goes through one scripted transport, into a real local dir in a temp folder. What the
// integration tests show against the emulator and nginx, in milliseconds: the stages run in order, the
// token goes to the Hub alone, every file is published with its bytes, and a re-run asks for no file.
#include "hfget/download.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "crypto/digest.hpp"
#include "hub/hub_urls.hpp"
#include "support/fake_transport.hpp"
#include "support/temp_dir.hpp"
#include "transfer/download_steps.hpp"

namespace hfget::transfer {
namespace {

using test_support::FakeAnswer;
using test_support::FakeTransport;
using test_support::RecordedRequest;
using test_support::TempDir;

const std::string kEndpoint = "https://hub.test";
const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
const std::string kCdnHost = "https://cdn.test/";

std::string sha256_of(const std::string& content) {
  crypto::Digest sha = crypto::Digest::sha256();
  sha.update(std::as_bytes(std::span(content.data(), content.size())));
  return sha.finish_hex();
}

std::string content_of(std::size_t size, unsigned seed) {
  std::string content(size, '\0');
  for (std::size_t i = 0; i < size; ++i) content[i] = static_cast<char>((i * 131 + seed) & 0xFF);
  return content;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class Silent final : public ProgressSink {};

struct DownloadTest : ::testing::Test {
  TempDir dir;
  RepoId repo{RepoType::kModel, "org/name"};
  FakeTransport transport;
  Silent progress;
  std::map<std::string, std::string> contents;
  std::string tree = "[";

  // An LFS file: the Hub's resolve redirects to a signed CDN URL, which serves its ranges.
  void add_lfs_file(const std::string& path, const std::string& content) {
    contents[path] = content;
    const std::string cdn = kCdnHost + path + "?signature=s";
    transport.script(hub::resolve_url(kEndpoint, repo, kCommit, path), {FakeAnswer::redirect(cdn)});
    transport.script(cdn, {FakeAnswer::ranged(content, "\"" + sha256_of(content) + "\"")});
    if (tree.size() > 1) tree += ",";
    tree += R"({"type": "file", "path": ")" + path + R"(", "size": )" + std::to_string(content.size()) +
            R"(, "oid": ")" + std::string(40, 'b') + R"(", "lfs": {"oid": ")" + sha256_of(content) + R"(", "size": )" +
            std::to_string(content.size()) + R"(, "pointerSize": 134}})";
  }

  void script_hub() {
    transport.script(hub::revision_info_url(kEndpoint, repo, "main"),
                     {FakeAnswer::json(R"({"id": "org/name", "sha": ")" + kCommit + R"(", "siblings": []})")});
    transport.script(hub::tree_url(kEndpoint, repo, kCommit), {FakeAnswer::json(tree + "]")});
  }

  DownloadOptions options() const {
    DownloadOptions options;
    options.repo = repo;
    options.local_dir = dir.path() / "model";
    options.hub.endpoint = kEndpoint;
    options.hub.token = Secret("hf_unit_test_token");
    options.hub.max_attempts = 3;
    options.hub.retry_base_delay = std::chrono::milliseconds(1);
    options.connections = 4;
    options.max_workers = 2;
    options.chunk_bytes = 4 << 20;  // the smallest chunk: the 9 MiB file is fetched in several ranges
    options.check_space = false;
    return options;
  }

  DownloadReport run() {
    return download_through(options(), progress, {},
                            [this] { return std::make_unique<test_support::LentTransport<FakeTransport>>(transport); });
  }
};

TEST_F(DownloadTest, EveryFileIsPublishedWithItsBytesAndTheTokenGoesOnlyToTheHub) {
  add_lfs_file("model.bin", content_of(9 << 20, 1));
  add_lfs_file("sub/notes.dat", content_of(1000, 2));
  script_hub();

  const DownloadReport report = run();

  EXPECT_EQ(report.commit, kCommit);
  EXPECT_EQ(report.files_fetched, 2U);
  EXPECT_EQ(report.bytes_received, (9U << 20) + 1000U);
  for (const auto& [path, content] : contents) {
    EXPECT_EQ(read_file(dir.path() / "model" / path), content) << path;
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "model" / (path + ".hfget-partial"))) << path;
  }
  std::size_t cdn_ranges = 0;
  for (const RecordedRequest& request : transport.requests()) {
    const bool to_cdn = request.url.rfind(kCdnHost, 0) == 0;
    EXPECT_EQ(request.bearer, !to_cdn) << request.url;
    cdn_ranges += to_cdn ? 1 : 0;
  }
  EXPECT_GE(cdn_ranges, 3U) << "the 9 MiB file in 4 MiB chunks, and the small one";
}

TEST_F(DownloadTest, ARerunOfACompleteDownloadAsksTheHubAndNoFile) {
  add_lfs_file("model.bin", content_of(300 << 10, 3));
  script_hub();
  run();
  const std::size_t first_run = transport.requests().size();

  const DownloadReport again = run();

  EXPECT_EQ(again.files_fetched, 0U);
  EXPECT_EQ(again.files_already_complete, 1U);
  const std::vector<RecordedRequest> all = transport.requests();
  ASSERT_EQ(all.size(), first_run + 2) << "the revision and the tree listing, nothing else";
  EXPECT_EQ(all[first_run].url, hub::revision_info_url(kEndpoint, repo, "main"));
  EXPECT_EQ(all[first_run + 1].url, hub::tree_url(kEndpoint, repo, kCommit));
}

}  // namespace
}  // namespace hfget::transfer
