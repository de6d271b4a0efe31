"""--revision: branches, tags, full and short commit shas and refs/pr/N resolve to the right commit; the
cache gets refs/<revision> (no newline) only when the revision is not itself a commit sha."""

from __future__ import annotations

import unittest

from harness import KIB
from support import HfgetTestCase, files_under, repo_folder_name

REPO = "test-org/branchy-model"


class RevisionTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.main_source = cls.make_model("main", shards=1, shard_size=16 * KIB, seed=1)
        cls.dev_source = cls.make_model("dev", shards=2, shard_size=16 * KIB, seed=2)
        cls.pr_source = cls.make_model("pr", shards=1, shard_size=24 * KIB, seed=3)
        cls.hub = cls.start_hub({REPO: cls.main_source, f"{REPO}@dev": cls.dev_source,
                                 f"{REPO}@refs/pr/1": cls.pr_source}, tags={f"{REPO}@v1.0": "dev"})

    def download(self, revision: str):
        cache = self.hub.new_dir("cache")
        return self.hub.run_hfget(["download", REPO, "--revision", revision, "--cache-dir", cache]), cache

    def test_branch(self):
        result, cache = self.download("dev")
        self.assertSucceeded(result)
        snapshot = self.assertCacheSnapshot(cache, REPO, self.hub.commit(REPO, "dev"), self.dev_source,
                                            revision="dev")
        self.assertStdoutIsPath(result, snapshot)

    def test_tag(self):
        result, cache = self.download("v1.0")
        self.assertSucceeded(result)
        self.assertCacheSnapshot(cache, REPO, self.hub.commit(REPO, "dev"), self.dev_source, revision="v1.0")

    def test_pull_request_ref_is_stored_under_refs_refs_pr(self):
        result, cache = self.download("refs/pr/1")
        self.assertSucceeded(result)
        commit = self.hub.commit(REPO, "refs/pr/1")
        self.assertCacheSnapshot(cache, REPO, commit, self.pr_source, revision="refs/pr/1")
        self.assertEqual((cache / repo_folder_name(REPO) / "refs" / "refs" / "pr" / "1").read_bytes(), commit.encode())

    def test_full_commit_sha_writes_no_ref(self):
        commit = self.hub.commit(REPO, "dev")
        result, cache = self.download(commit)
        self.assertSucceeded(result)
        self.assertCacheSnapshot(cache, REPO, commit, self.dev_source, revision=None)
        self.assertEqual(files_under(cache / repo_folder_name(REPO) / "refs"), [])

    def test_short_commit_sha(self):
        commit = self.hub.commit(REPO, "dev")
        result, cache = self.download(commit[:10])
        self.assertSucceeded(result)
        self.assertStdoutIsPath(result, cache / repo_folder_name(REPO) / "snapshots" / commit)

    def test_unknown_revision_exits_5(self):
        result, cache = self.download("no-such-branch")
        self.assertExit(result, 5)
        self.assertIn("no-such-branch", result.stderr)
        self.assertEqual(files_under(cache / repo_folder_name(REPO) / "snapshots"), [])


if __name__ == "__main__":
    unittest.main()
