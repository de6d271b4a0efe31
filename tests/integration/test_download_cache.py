"""Downloading a whole repo into the HF cache: bytes identical to the source, the cache layout of
HUB-PROTOCOL §4, the one-line stdout contract, the cache-dir precedence, and a re-run that fetches nothing."""

from __future__ import annotations

import unittest

from harness import MIB, source_files
from support import HfgetTestCase, files_under, repo_folder_name

REPO = "test-org/tiny-model"
ODD_REPO = "test-org/odd-names"


class CacheDownloadTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=4, shard_size=1 * MIB)
        cls.odd_source = cls.make_model("odd", shards=1, shard_size=16 * 1024, odd_names=True)
        cls.hub = cls.start_hub({REPO: cls.source, ODD_REPO: cls.odd_source})
        cls.commit = cls.hub.commit(REPO)

    def test_full_download_into_cache_dir_matches_the_source_and_layout(self):
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", REPO, "--cache-dir", cache])
        self.assertSucceeded(result)
        snapshot = self.assertCacheSnapshot(cache, REPO, self.commit, self.source)
        self.assertStdoutIsPath(result, snapshot)
        self.assertEqual(files_under(result.home), [], "nothing is written outside the cache dir")

    def test_lfs_bodies_come_from_the_cdn_and_regular_files_from_the_hub(self):
        self.hub.reset_logs()
        cache = self.hub.new_dir("cache")
        self.assertSucceeded(self.hub.run_hfget(["download", REPO, "--cache-dir", cache]))
        sources = source_files(self.source)
        lfs = {f.sha256 for f in sources.values() if f.lfs}
        cdn_paths = {r["path"].strip("/") for r in self.hub.cdn_requests() if r["status"] in (200, 206)}
        self.assertEqual(cdn_paths, lfs, "every LFS file, and only those, is fetched from the CDN")
        resolved = {r["file"] for r in self.hub.hub_requests() if "/resolve/" in r["path"]}
        # An empty file needs no request: the listing says everything about it.
        self.assertEqual(resolved - {p for p, f in sources.items() if f.size == 0},
                         {p for p, f in sources.items() if f.size}, "every non-empty file is resolved on the Hub")

    def test_rerun_on_a_complete_download_makes_no_file_requests(self):
        cache = self.hub.new_dir("cache")
        first = self.hub.run_hfget(["download", REPO, "--cache-dir", cache])
        self.assertSucceeded(first)
        self.hub.reset_logs()
        second = self.hub.run_hfget(["download", REPO, "--cache-dir", cache], home=first.home)
        self.assertSucceeded(second)
        self.assertEqual(second.stdout, first.stdout)
        hub_paths = [r["path"] for r in self.hub.hub_requests()]
        self.assertEqual([p for p in hub_paths if "/resolve/" in p], [], "no /resolve/ request on a re-run")
        self.assertTrue(all(p.startswith("/api/") for p in hub_paths), hub_paths)
        self.assertEqual(self.hub.cdn_requests(), [], "no CDN request on a re-run")
        self.assertCacheSnapshot(cache, REPO, self.commit, self.source)

    def test_cache_dir_defaults_to_hf_home_hub(self):
        result = self.hub.run_hfget(["download", REPO, "--include", "*.json"])
        self.assertSucceeded(result)
        cache = result.home / ".cache" / "huggingface" / "hub"
        snapshot = cache / repo_folder_name(REPO) / "snapshots" / self.commit
        self.assertStdoutIsPath(result, snapshot)
        self.assertTrue((snapshot / "config.json").is_file())

    def test_hf_hub_cache_wins_over_hf_home(self):
        cache = self.hub.new_dir("hub-cache")
        result = self.hub.run_hfget(["download", REPO, "--include", "config.json"], env={"HF_HUB_CACHE": cache})
        self.assertSucceeded(result)
        self.assertStdoutIsPath(result, cache / repo_folder_name(REPO) / "snapshots" / self.commit)
        self.assertEqual(files_under(result.home), [])

    def test_legacy_huggingface_hub_cache_is_honoured(self):
        cache = self.hub.new_dir("legacy-cache")
        result = self.hub.run_hfget(["download", REPO, "--include", "config.json"],
                                    env={"HUGGINGFACE_HUB_CACHE": cache})
        self.assertSucceeded(result)
        self.assertStdoutIsPath(result, cache / repo_folder_name(REPO) / "snapshots" / self.commit)

    def test_xdg_cache_home_is_used_without_hf_home(self):
        home = self.hub.new_dir("home")
        xdg = home / "xdg"
        result = self.hub.run_hfget(["download", REPO, "--include", "config.json"], home=home,
                                    env={"HF_HOME": None, "XDG_CACHE_HOME": xdg})
        self.assertSucceeded(result)
        expected = xdg / "huggingface" / "hub" / repo_folder_name(REPO) / "snapshots" / self.commit
        self.assertStdoutIsPath(result, expected)

    def test_endpoint_flag_overrides_hf_endpoint(self):
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", REPO, "--include", "config.json", "--cache-dir", cache,
                                     "--endpoint", self.hub.url], env={"HF_ENDPOINT": "http://127.0.0.1:9"})
        self.assertSucceeded(result)

    def test_file_names_needing_percent_encoding(self):
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", ODD_REPO, "--cache-dir", cache])
        self.assertSucceeded(result)
        self.assertCacheSnapshot(cache, ODD_REPO, self.hub.commit(ODD_REPO), self.odd_source)

    def test_parallel_workers_produce_the_same_result_as_one(self):
        for workers in ("1", "8"):
            with self.subTest(max_workers=workers):
                cache = self.hub.new_dir("cache")
                result = self.hub.run_hfget(["download", REPO, "--cache-dir", cache, "--max-workers", workers])
                self.assertSucceeded(result)
                self.assertCacheSnapshot(cache, REPO, self.commit, self.source)

    def test_quiet_prints_only_the_path(self):
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", REPO, "--include", "*.json", "--cache-dir", cache, "-q"])
        self.assertSucceeded(result)
        self.assertStdoutIsPath(result, cache / repo_folder_name(REPO) / "snapshots" / self.commit)
        self.assertEqual(result.stderr, "", "-q prints nothing on stderr on success")


class GzipTextTest(HfgetTestCase):
    """The Hub may gzip text files (chunked, no Content-Length) for a client that accepts gzip
    (HUB-PROTOCOL §1.5): whatever hfget sends, the files on disk are the original bytes."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=1, shard_size=64 * 1024)
        cls.hub = cls.start_hub({REPO: cls.source}, gzip_text=True)

    def test_json_files_are_stored_decoded(self):
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", REPO, "--cache-dir", cache])
        self.assertSucceeded(result)
        self.assertCacheSnapshot(cache, REPO, self.hub.commit(REPO), self.source)


if __name__ == "__main__":
    unittest.main()
