"""Downloading into --local-dir: real files identical to the source, the .cache/huggingface metadata of
HUB-PROTOCOL §5, nothing written to the HF cache, and a re-run that fetches nothing."""

from __future__ import annotations

import os
import unittest

from harness import MIB
from support import HfgetTestCase, files_under

REPO = "test-org/tiny-model"


class LocalDirDownloadTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=4, shard_size=1 * MIB)
        cls.hub = cls.start_hub({REPO: cls.source})
        cls.commit = cls.hub.commit(REPO)

    def test_full_download_into_local_dir_matches_the_source_and_layout(self):
        target = self.hub.new_dir("local") / "model"
        result = self.hub.run_hfget(["download", REPO, "--local-dir", target])
        self.assertSucceeded(result)
        self.assertStdoutIsPath(result, target)
        self.assertEqual(result.stdout.strip(), os.path.realpath(target), "stdout is realpath(local_dir)")
        self.assertLocalDir(target, self.commit, self.source)
        self.assertEqual(files_under(result.home), [], "local-dir mode writes nothing to the HF cache or HOME")

    def test_relative_local_dir_prints_its_realpath(self):
        workdir = self.hub.new_dir("cwd")
        result = self.hub.run_hfget(["download", REPO, "--include", "*.json", "--local-dir", "out"], cwd=workdir)
        self.assertSucceeded(result)
        self.assertEqual(result.stdout.strip(), os.path.realpath(workdir / "out"))

    def test_rerun_on_a_complete_local_dir_makes_no_file_requests(self):
        target = self.hub.new_dir("local")
        first = self.hub.run_hfget(["download", REPO, "--local-dir", target])
        self.assertSucceeded(first)
        self.hub.reset_logs()
        second = self.hub.run_hfget(["download", REPO, "--local-dir", target], home=first.home)
        self.assertSucceeded(second)
        self.assertEqual([r["path"] for r in self.hub.hub_requests() if "/resolve/" in r["path"]], [])
        self.assertEqual(self.hub.cdn_requests(), [])
        self.assertLocalDir(target, self.commit, self.source)

    def test_a_file_changed_on_disk_is_fetched_again(self):
        target = self.hub.new_dir("local")
        self.assertSucceeded(self.hub.run_hfget(["download", REPO, "--local-dir", target]))
        shard = target / "model-00002-of-00004.safetensors"
        with open(shard, "r+b") as stream:   # same size, different bytes, newer mtime than its metadata
            stream.seek(100)
            stream.write(b"\0" * 16)
        later = os.stat(shard).st_mtime + 5
        os.utime(shard, (later, later))
        result = self.hub.run_hfget(["download", REPO, "--local-dir", target])
        self.assertSucceeded(result)
        self.assertLocalDir(target, self.commit, self.source)

    def test_existing_unrelated_files_are_left_alone(self):
        target = self.hub.new_dir("local")
        (target / "mine.txt").write_text("keep me")
        self.assertSucceeded(self.hub.run_hfget(["download", REPO, "--include", "*.json", "--local-dir", target]))
        self.assertEqual((target / "mine.txt").read_text(), "keep me")


if __name__ == "__main__":
    unittest.main()
