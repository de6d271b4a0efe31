"""--dry-run prints the plan (a table naming every file) on stdout and writes nothing anywhere."""

from __future__ import annotations

import unittest

from harness import KIB, source_files
from support import HfgetTestCase, files_under

REPO = "test-org/tiny-model"


class DryRunTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=2, shard_size=64 * KIB)
        cls.hub = cls.start_hub({REPO: cls.source})

    def assertFetchedNoFileBody(self) -> None:
        self.assertEqual(self.hub.cdn_requests(), [], "no CDN request in a dry run")
        gets = [r for r in self.hub.hub_requests() if "/resolve/" in r["path"] and r["method"] == "GET"]
        self.assertEqual(gets, [], "no file GET in a dry run")

    def test_dry_run_into_cache_lists_files_and_writes_nothing(self):
        self.hub.reset_logs()
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", REPO, "--dry-run", "--cache-dir", cache])
        self.assertSucceeded(result)
        for path in source_files(self.source):
            self.assertIn(path, result.stdout, "the plan names every file")
        self.assertEqual(files_under(cache), [])
        self.assertEqual(files_under(result.home), [])
        self.assertFetchedNoFileBody()

    def test_dry_run_into_local_dir_writes_nothing(self):
        self.hub.reset_logs()
        target = self.hub.new_dir("local") / "model"
        result = self.hub.run_hfget(["download", REPO, "--dry-run", "--include", "*.json", "--local-dir", target])
        self.assertSucceeded(result)
        self.assertIn("config.json", result.stdout)
        self.assertEqual(files_under(target), [])
        self.assertEqual(files_under(result.home), [])
        self.assertFetchedNoFileBody()


if __name__ == "__main__":
    unittest.main()
