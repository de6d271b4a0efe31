"""Transient failures are retried and resumed from the current offset; corrupt bytes are caught by the hash
check and fetched once more; persistent corruption fails with exit 8 naming the file and both hashes.
Faults are injected by the emulator (its built-in CDN serves the LFS bodies here)."""

from __future__ import annotations

import hashlib
import unittest

from harness import KIB, MIB, source_files
from support import HfgetTestCase, files_under

REPO = "test-org/faulty-model"
SHARD = "model-00001-of-00002.safetensors"


class FaultTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=2, shard_size=1 * MIB)
        cls.files = source_files(cls.source)
        cls.hub = cls.start_hub({REPO: cls.source}, cdn="emulator")
        cls.commit = cls.hub.commit(REPO)

    def setUp(self):
        self.hub.clear_faults()
        self.hub.reset_logs()
        self.addCleanup(self.hub.clear_faults)

    def download_with(self, rules: list[dict], *extra: str, timeout: float = 90.0):
        self.hub.set_faults(rules)
        self.injected_before = self.hub.stats()["faults_injected"]
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", REPO, "--cache-dir", cache, *extra], timeout=timeout)
        return result, cache

    def injected(self, kind: str) -> int:
        return self.hub.stats()["faults_injected"][kind] - self.injected_before[kind]

    def assertDownloadedCorrectly(self, result, cache) -> None:
        self.assertSucceeded(result)
        self.assertCacheSnapshot(cache, REPO, self.commit, self.source)

    def body_requests(self, path: str) -> list[dict]:
        """GETs that served (or were meant to serve) the body of `path`, on the CDN or the Hub."""
        return [r for r in self.hub.requests() if r["file"] == path and r["method"] == "GET"
                and (r["listener"] == "cdn" or not self.files[path].lfs)]

    def test_dropped_connection_is_resumed_from_the_current_offset(self):
        result, cache = self.download_with([{"path": SHARD, "kind": "drop", "after_bytes": 600 * KIB}])
        self.assertDownloadedCorrectly(result, cache)
        self.assertEqual(self.injected("drop"), 1)
        served = sum(r["bytes_sent"] for r in self.body_requests(SHARD) if r["status"] in (200, 206))
        self.assertLess(served, self.files[SHARD].size + 300 * KIB,
                        "the retry continues where the drop happened instead of starting over")
        self.assertTrue(any((r["range"] or "").startswith("bytes=") and not r["range"].startswith("bytes=0-")
                            for r in self.body_requests(SHARD)), "a Range request resumed the shard")

    def test_drop_of_a_regular_file_is_retried(self):
        result, cache = self.download_with([{"path": "tokenizer_config.json", "kind": "drop", "after_bytes": 10}])
        self.assertDownloadedCorrectly(result, cache)
        self.assertEqual(self.injected("drop"), 1)

    def test_http_500_is_retried(self):
        result, cache = self.download_with([{"path": SHARD, "kind": "status", "status": 500}])
        self.assertDownloadedCorrectly(result, cache)
        self.assertEqual(self.injected("status"), 1)

    def test_http_503_is_retried_several_times(self):
        result, cache = self.download_with([{"path": "config.json", "kind": "status", "status": 503, "times": 2}])
        self.assertDownloadedCorrectly(result, cache)
        self.assertEqual(self.injected("status"), 2)

    def test_http_429_waits_for_retry_after(self):
        result, cache = self.download_with([{"path": SHARD, "kind": "status", "status": 429, "retry_after": 1}])
        self.assertDownloadedCorrectly(result, cache)
        requests = self.body_requests(SHARD)
        limited = next(i for i, r in enumerate(requests) if r["status"] == 429)
        self.assertGreater(len(requests), limited + 1, "retried after the 429")
        waited = requests[limited + 1]["time"] - requests[limited]["time"]
        self.assertGreaterEqual(waited, 0.9, "Retry-After: 1 must be honoured (backoff alone is 50 ms here)")

    def test_503_on_resolve_is_retried(self):
        result, cache = self.download_with([{"path": SHARD, "kind": "status", "status": 503, "target": "resolve"}])
        self.assertDownloadedCorrectly(result, cache)
        self.assertEqual(self.injected("status"), 1)

    def test_stalled_transfer_is_abandoned_after_the_stall_timeout(self):
        result, cache = self.download_with(
            [{"path": SHARD, "kind": "stall", "after_bytes": 100 * KIB, "seconds": 40}], "--stall-timeout", "2")
        self.assertDownloadedCorrectly(result, cache)
        self.assertEqual(self.injected("stall"), 1)
        self.assertLess(result.elapsed, 30, "hfget waited for the stalled server instead of retrying")

    def test_flipped_byte_is_caught_and_the_file_fetched_again(self):
        result, cache = self.download_with([{"path": SHARD, "kind": "flip", "offset": 123457}])
        self.assertDownloadedCorrectly(result, cache)
        self.assertEqual(self.injected("flip"), 1)

    def test_flipped_byte_in_a_regular_file_is_caught(self):
        result, cache = self.download_with([{"path": "config.json", "kind": "flip", "offset": 3}])
        self.assertDownloadedCorrectly(result, cache)
        self.assertEqual(self.injected("flip"), 1)

    def test_persistent_corruption_exits_8_naming_the_file_and_both_hashes(self):
        offset = 4321
        result, cache = self.download_with([{"path": SHARD, "kind": "flip", "offset": offset, "times": -1}])
        self.assertExit(result, 8)
        corrupted = bytearray((self.source / SHARD).read_bytes())
        corrupted[offset] ^= 0xFF
        self.assertIn(SHARD, result.stderr)
        self.assertIn(self.files[SHARD].sha256, result.stderr, "the expected hash is named")
        self.assertIn(hashlib.sha256(corrupted).hexdigest(), result.stderr, "the received hash is named")
        self.assertGreaterEqual(self.injected("flip"), 2, "the file is fetched once more before giving up")
        blob = f"{'models--' + REPO.replace('/', '--')}/blobs/{self.files[SHARD].sha256}"
        self.assertNotIn(blob, files_under(cache), "corrupt bytes never get the final name")

    def test_corruption_that_differs_each_time_is_retried_until_the_bytes_match(self):
        # Three downloads in a row flipped at a random byte each (transport corruption): each wrong hash
        # differs from the one before, so the file is fetched again (with backoff) within --retries.
        result, cache = self.download_with([{"path": SHARD, "kind": "flip", "offset": -1, "times": 3, "seed": 5}])
        self.assertDownloadedCorrectly(result, cache)
        self.assertEqual(self.injected("flip"), 3)
        self.assertIn("corrupted in transit", result.stderr)

    def test_the_same_wrong_hash_twice_fails_at_once_with_retries_left(self):
        result, cache = self.download_with([{"path": SHARD, "kind": "flip", "offset": 99, "times": -1}],
                                           "--retries", "8")
        self.assertExit(result, 8)
        self.assertEqual(self.injected("flip"), 2, "the second identical hash ends it; no third download")
        self.assertIn("twice in a row", result.stderr)
        self.assertIn("differ from the listing", result.stderr)

    def test_http_429_with_a_used_up_rate_limit_waits_for_its_reset_and_says_so(self):
        # The Hub's resolver quota: 429 with `RateLimit: "api";r=0;t=1` and no Retry-After. The reset plus one
        # second is waited (backoff alone is 50 ms here), the retry line says why, and the file still costs
        # one /resolve/ request once the quota is back.
        result, cache = self.download_with([{"path": SHARD, "kind": "status", "status": 429, "target": "resolve",
                                             "ratelimit_reset": 1}])
        self.assertDownloadedCorrectly(result, cache)
        resolves = [r for r in self.hub.hub_requests() if r["file"] == SHARD and "/resolve/" in r["path"]]
        self.assertEqual([r["status"] for r in resolves], [429, 302], "one request after the wait")
        self.assertGreaterEqual(resolves[1]["time"] - resolves[0]["time"], 1.9, "waited for the quota's reset + 1 s")
        self.assertIn("rate limited: the quota resets in 1s", result.stderr)

    def test_a_used_up_quota_holds_every_connections_requests_to_the_hub(self):
        # The quota is the client's, not one request's. Two connections start the first two files at once:
        # .gitattributes gets 429 "quota used up, resets in 2 s"; README.md's answer stalls for 1 s and
        # breaks. Its retry must wait for the reset too, instead of spending another request of the quota.
        result, cache = self.download_with(
            [{"path": ".gitattributes", "kind": "status", "status": 429, "target": "resolve", "ratelimit_reset": 2},
             {"path": "README.md", "kind": "stall", "after_bytes": 10, "seconds": 1}],
            "--connections", "2", "--max-workers", "2")
        self.assertDownloadedCorrectly(result, cache)
        resolves = [r for r in self.hub.hub_requests() if "/resolve/" in r["path"]]
        limited = next(r for r in resolves if r["status"] == 429)
        readme = [r["time"] - limited["time"] for r in resolves if r["file"] == "README.md"]
        self.assertEqual(len(readme), 2, "README.md: the stalled request and its retry")
        self.assertGreaterEqual(readme[1], 2.9, "the retry waited for the quota's reset (2 s + 1 s)")
        during = [r["file"] for r in resolves if limited["time"] + 0.3 < r["time"] < limited["time"] + 2.9]
        self.assertEqual(during, [], "no request to the Hub while its quota is used up")

    def test_api_429_with_a_used_up_rate_limit_waits_for_its_reset_and_says_so(self):
        result, cache = self.download_with([{"path": "*", "kind": "status", "status": 429, "target": "api",
                                             "ratelimit_reset": 1}])
        self.assertDownloadedCorrectly(result, cache)
        api = [r for r in self.hub.hub_requests() if r["path"].startswith("/api/")]
        self.assertEqual(api[0]["status"], 429)
        self.assertGreaterEqual(api[1]["time"] - api[0]["time"], 1.9, "waited for the quota's reset + 1 s")
        self.assertIn("rate limited: the quota resets in 1s", result.stderr)

    def test_expired_signed_url_is_resolved_again(self):
        # The drop forces a second request; by then the URL has "expired" and only a fresh resolve works.
        result, cache = self.download_with([{"path": SHARD, "kind": "drop", "after_bytes": 200 * KIB},
                                            {"path": SHARD, "kind": "expire"}])
        self.assertDownloadedCorrectly(result, cache)
        self.assertEqual(self.injected("expire"), 1)
        resolves = [r for r in self.hub.hub_requests() if r["file"] == SHARD and "/resolve/" in r["path"]]
        self.assertGreaterEqual(len(resolves), 2, "a new signed URL was asked for")

    def test_persistent_server_errors_exit_7(self):
        result, cache = self.download_with([{"path": SHARD, "kind": "status", "status": 500, "times": -1}],
                                           "--retries", "2")
        self.assertExit(result, 7)
        self.assertIn(SHARD, result.stderr)
        self.assertLessEqual(self.injected("status"), 3, "--retries 2 means at most 3 attempts")


if __name__ == "__main__":
    unittest.main()
