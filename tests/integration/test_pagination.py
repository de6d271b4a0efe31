"""Tree listings longer than a page: hfget follows the Link rel="next" URLs to the end (page size 2 here)."""

from __future__ import annotations

import unittest

from harness import KIB, source_files
from support import HfgetTestCase

REPO = "test-org/paged-model"
PAGE_SIZE = 2


class PaginationTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=3, shard_size=32 * KIB)
        cls.hub = cls.start_hub({REPO: cls.source}, page_size=PAGE_SIZE)
        cls.commit = cls.hub.commit(REPO)

    def test_every_page_of_the_tree_is_followed(self):
        self.hub.reset_logs()
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", REPO, "--cache-dir", cache])
        self.assertSucceeded(result)
        self.assertCacheSnapshot(cache, REPO, self.commit, self.source)
        # Files and folders are all listed: at least ceil(files / page size) pages were read.
        tree_requests = [r for r in self.hub.hub_requests() if "/tree/" in r["path"]]
        self.assertGreaterEqual(len(tree_requests), -(-len(source_files(self.source)) // PAGE_SIZE))
        self.assertTrue(all(r["status"] == 200 for r in tree_requests))
        cursors = [r["query"] for r in tree_requests if "cursor=" in r["query"]]
        self.assertEqual(len(cursors), len(set(cursors)), "no page is fetched twice")

    def test_local_dir_download_is_complete_too(self):
        target = self.hub.new_dir("local")
        result = self.hub.run_hfget(["download", REPO, "--local-dir", target])
        self.assertSucceeded(result)
        self.assertLocalDir(target, self.commit, self.source)


if __name__ == "__main__":
    unittest.main()
