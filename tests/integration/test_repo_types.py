"""--repo-type dataset|space: the cache folder is datasets--org--name / spaces--org--name, the API path is
/api/datasets|spaces/ and files resolve under the /datasets/ or /spaces/ prefix."""

from __future__ import annotations

import unittest

from harness import KIB
from support import HfgetTestCase

DATASET = "test-org/tiny-dataset"
SPACE = "test-org/tiny-space"


class RepoTypeTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("data", shards=2, shard_size=32 * KIB)
        # The same name as a model with other content: the type must pick the right repo.
        cls.decoy = cls.make_model("decoy", shards=1, shard_size=8 * KIB, seed=99)
        cls.hub = cls.start_hub({f"dataset:{DATASET}": cls.source, f"space:{SPACE}": cls.source,
                                 DATASET: cls.decoy})

    def check_type(self, repo_type: str, repo_id: str, prefix: str) -> None:
        self.hub.reset_logs()
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", repo_id, "--repo-type", repo_type, "--cache-dir", cache])
        self.assertSucceeded(result)
        commit = self.hub.commit(repo_id, repo_type=repo_type)
        snapshot = self.assertCacheSnapshot(cache, repo_id, commit, self.source, repo_type=repo_type)
        self.assertStdoutIsPath(result, snapshot)
        paths = [r["path"] for r in self.hub.hub_requests()]
        api = [p for p in paths if p.startswith("/api/")]
        resolves = [p for p in paths if "/resolve/" in p]
        self.assertTrue(api and all(p.startswith(f"/api/{repo_type}s/{repo_id}/") for p in api), api)
        self.assertTrue(resolves and all(p.startswith(f"/{prefix}{repo_id}/resolve/") for p in resolves), resolves)

    def test_dataset(self):
        self.check_type("dataset", DATASET, "datasets/")

    def test_space(self):
        self.check_type("space", SPACE, "spaces/")

    def test_dataset_into_local_dir(self):
        target = self.hub.new_dir("local")
        result = self.hub.run_hfget(["download", DATASET, "--repo-type", "dataset", "--local-dir", target])
        self.assertSucceeded(result)
        self.assertLocalDir(target, self.hub.commit(DATASET, repo_type="dataset"), self.source)

    def test_unknown_repo_type_is_a_usage_error(self):
        result = self.hub.run_hfget(["download", DATASET, "--repo-type", "bucket", "--cache-dir",
                                     self.hub.new_dir("cache")])
        self.assertExit(result, 2)


if __name__ == "__main__":
    unittest.main()
