"""Correctness without file locks. On NFS and Lustre flock can silently succeed for everyone; hfget must then
still end with one correct copy when several processes download the same repo into the same target at once.
HFGET_TEST_DISABLE_LOCKS=1 makes every lock a no-op (per file and per target), as such a filesystem would.

What keeps them apart is the partial-file design (docs/reliability.md): each process writes its own
<shared name>.<host>-<pid>-<random>.hfget-partial, verifies it, then renames it into place; a resume claims
a partial file by renaming it, and only one whose owner is gone."""

from __future__ import annotations

import signal
import unittest
from pathlib import Path

from harness import KIB, MIB, source_files, wait_until
from support import HfgetTestCase, files_under, repo_folder_name
from test_soak import corrupt_published, json_events

REPO = "test-org/shared-model"
NO_LOCKS = {"HFGET_TEST_DISABLE_LOCKS": "1"}
ARGS = ["--connections", "4", "--chunk-size", "128KiB", "--retries", "4", "--progress", "json"]
PROCESSES = 3


class NoLocksTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=4, shard_size=1 * MIB, seed=11)
        cls.files = source_files(cls.source)
        cls.total = sum(f.size for f in cls.files.values())
        # Slow enough that the processes overlap for most of their download.
        cls.hub = cls.start_hub({REPO: cls.source}, cdn="emulator", body_rate=2 * MIB)
        cls.commit = cls.hub.commit(REPO)

    def setUp(self):
        self.hub.clear_faults()
        self.addCleanup(self.hub.clear_faults)

    def run_together(self, args: list[str], home: Path, count: int = PROCESSES) -> list:
        runs = [self.hub.start_hfget(args, home=home, env=NO_LOCKS) for _ in range(count)]
        for run in runs:
            self.addCleanup(run.ensure_stopped)
        return [run.wait(timeout=120) for run in runs]

    def assertNoPartialsLeft(self, target: Path) -> None:
        self.assertEqual([n for n in files_under(target) if n.endswith((".hfget-partial", ".hfget-journal"))], [],
                         "every process cleaned up its own partial files")

    def test_processes_sharing_a_cache_end_with_one_correct_copy(self):
        home, cache = self.hub.new_dir("home"), self.hub.new_dir("cache")
        results = self.run_together(["download", REPO, "--cache-dir", cache, *ARGS], home)
        for result in results:
            self.assertSucceeded(result)
        self.assertCacheSnapshot(cache, REPO, self.commit, self.source)
        self.assertEqual(corrupt_published(cache, "cache", REPO, self.files), [])
        blobs = files_under(cache / repo_folder_name(REPO) / "blobs")
        self.assertEqual(sorted(blobs), sorted({f.etag for f in self.files.values()}), "one blob per etag")

    def test_processes_sharing_a_local_dir_end_with_one_correct_copy(self):
        home, target = self.hub.new_dir("home"), self.hub.new_dir("local")
        results = self.run_together(["download", REPO, "--local-dir", target, *ARGS], home)
        for result in results:
            self.assertSucceeded(result)
        self.assertLocalDir(target, self.commit, self.source)
        self.assertNoPartialsLeft(target)

    def test_corrupt_bytes_in_one_process_never_replace_a_good_copy(self):
        # Flipped bytes reach whichever process asks at the wrong moment: it fetches the file again, and what
        # it publishes is verified, so the shared result stays byte-correct.
        self.hub.set_faults([{"path": "*.safetensors", "kind": "flip", "offset": 300 * KIB, "times": 4}])
        home, cache = self.hub.new_dir("home"), self.hub.new_dir("cache")
        results = self.run_together(["download", REPO, "--cache-dir", cache, *ARGS], home)
        for result in results:
            self.assertIn(result.code, (0, 8), result.describe())
        self.assertEqual(corrupt_published(cache, "cache", REPO, self.files), [])
        final = self.hub.run_hfget(["download", REPO, "--cache-dir", cache, *ARGS], home=home, env=NO_LOCKS)
        self.assertSucceeded(final)
        self.assertCacheSnapshot(cache, REPO, self.commit, self.source)

    def test_a_resume_claims_the_partial_of_a_killed_run_not_of_a_live_one(self):
        home, target = self.hub.new_dir("home"), self.hub.new_dir("local")
        args = ["download", REPO, "--local-dir", target, *ARGS]
        victim = self.hub.start_hfget(args, home=home, env=NO_LOCKS)
        self.addCleanup(victim.ensure_stopped)

        def partial_bytes() -> int:
            total = 0
            for name in files_under(target):
                if name.endswith(".hfget-partial"):
                    try:
                        total += (target / name).stat().st_blocks * 512
                    except FileNotFoundError:   # published meanwhile
                        pass
            return total

        wait_until(lambda: victim.process.poll() is not None or partial_bytes() >= 1 * MIB, timeout=30,
                   what="part of the model on disk")
        self.assertIsNone(victim.process.poll(), "the run finished before it could be killed")
        victim.kill()
        self.assertEqual(victim.wait(timeout=30).code, -signal.SIGKILL)
        kept = partial_bytes()
        self.hub.reset_logs()
        results = self.run_together(args, home, count=2)
        for result in results:
            self.assertSucceeded(result)
        self.assertLocalDir(target, self.commit, self.source)
        self.assertNoPartialsLeft(target)
        started = [e for r in results for e in json_events(r.stderr)
                   if e.get("event") == "file_started" and e.get("resumed_bytes")]
        self.assertTrue(started, f"a resumed run picked up the {kept} bytes the killed run left")


if __name__ == "__main__":
    unittest.main()
