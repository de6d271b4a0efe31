"""A file that went bad after it was published (bit rot, an edit that kept its size) is repaired: `download
--verify` hashes what is on disk and fetches again exactly the files that fail, `--force-download` fetches
everything again; a plain re-run that fails its checks names that fix, and the summary says which files were
hashed in this run and which were trusted."""

from __future__ import annotations

import json
import os
import shlex
import unittest
from pathlib import Path

from harness import MIB, sha256_of, source_files
from support import HfgetTestCase, repo_folder_name

REPO = "test-org/rotting-model"
SHARD = "model-00001-of-00002.safetensors"


def flip_byte(path: Path, offset: int, keep_times: bool = True) -> None:
    """One bit-rotted byte, the file's mtime kept (as a failing disk leaves it)."""
    stat = path.stat()
    with open(path, "r+b") as stream:
        stream.seek(offset)
        byte = stream.read(1)
        stream.seek(offset)
        stream.write(bytes([byte[0] ^ 0xFF]))
    if keep_times:
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def vouch_as_unchanged(local_dir: Path, repo_path: str, etag: str, *, record: Path | None = None,
                       key: str | None = None) -> None:
    """Bit rot changes no inode time; flipping a byte here does (ctime). Record the file as hfget checked it,
    so the download sees what it would see after real bit rot: a file its record vouches for."""
    stat = (local_dir / repo_path).stat()
    line = {"path": key or repo_path, "etag": etag, "size": stat.st_size, "dev": stat.st_dev, "ino": stat.st_ino,
            "mtime_ns": stat.st_mtime_ns, "ctime_ns": stat.st_ctime_ns}
    record = record or local_dir / ".cache" / "huggingface" / "hfget" / "published.jsonl"
    with open(record, "a", encoding="utf-8") as stream:
        stream.write(json.dumps(line) + "\n")


class RepairTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=2, shard_size=1 * MIB, seed=3)
        cls.files = source_files(cls.source)
        cls.hub = cls.start_hub({REPO: cls.source}, cdn="emulator")
        cls.commit = cls.hub.commit(REPO)

    def setUp(self):
        self.hub.reset_logs()

    def body_gets(self) -> list[str]:
        """The repo files whose bodies were requested since the last reset (CDN or Hub)."""
        return sorted(r["file"] for r in self.hub.requests() if r["method"] == "GET" and r["file"]
                      and (r["listener"] == "cdn" or not self.files[r["file"]].lfs))

    def download_into_cache(self) -> tuple[Path, Path, Path]:
        home, cache = self.hub.new_dir("home"), self.hub.new_dir("cache")
        self.assertSucceeded(self.hub.run_hfget(["download", REPO, "--cache-dir", cache], home=home))
        blob = cache / repo_folder_name(REPO) / "blobs" / self.files[SHARD].etag
        self.hub.reset_logs()
        return home, cache, blob

    def test_a_rotted_cache_blob_fails_naming_the_fix_and_download_verify_refetches_only_it(self):
        home, cache, blob = self.download_into_cache()
        flip_byte(blob, 20)   # in the safetensors header: the download's checks see it
        failed = self.hub.run_hfget(["download", REPO, "--cache-dir", cache], home=home)
        self.assertExit(failed, 8)
        self.assertIn("--verify", failed.stderr, "the error names the repair")
        self.assertEqual(self.body_gets(), [], "a plain re-run trusts the blob")

        repaired = self.hub.run_hfget(["download", REPO, "--cache-dir", cache, "--verify"], home=home)
        self.assertSucceeded(repaired)
        self.assertCacheSnapshot(cache, REPO, self.commit, self.source)
        self.assertEqual(self.body_gets(), [SHARD], "exactly the file that failed its hash is fetched again")
        self.assertIn("repaired 1 file(s)", repaired.stderr)
        self.assertIn(f"{len(self.files)} file(s) hashed in this run", repaired.stderr)

    def test_force_download_fetches_every_file_again_and_replaces_a_rotted_one(self):
        home, cache, blob = self.download_into_cache()
        flip_byte(blob, self.files[SHARD].size - 5)   # in the tensor data: only a hash sees it
        forced = self.hub.run_hfget(["download", REPO, "--cache-dir", cache, "--force-download"], home=home)
        self.assertSucceeded(forced)
        self.assertCacheSnapshot(cache, REPO, self.commit, self.source)
        self.assertEqual(self.body_gets(), sorted(self.files), "every file fetched again")
        self.assertNotIn("trusted", forced.stderr)

    def test_bit_rot_in_a_local_dir_is_not_called_hashed_and_download_verify_repairs_it(self):
        home, local = self.hub.new_dir("home"), self.hub.new_dir("local")
        args = ["download", REPO, "--local-dir", local]
        self.assertSucceeded(self.hub.run_hfget(args, home=home))
        flip_byte(local / SHARD, self.files[SHARD].size - 5)
        vouch_as_unchanged(local, SHARD, self.files[SHARD].etag)
        self.hub.reset_logs()

        rerun = self.hub.run_hfget(args, home=home)
        self.assertSucceeded(rerun)   # nothing tells a plain re-run; it must not claim it hashed the bytes
        self.assertNotIn("every byte hashed on arrival", rerun.stderr)
        self.assertIn(f"{len(self.files)} file(s) found complete and trusted, not re-hashed", rerun.stderr)

        verify = self.hub.run_hfget(["verify", str(local)], home=home)
        self.assertExit(verify, 8)
        self.assertIn(f"hfget: to repair: hfget download REPO_ID {SHARD} --local-dir {local} --verify", verify.stderr)

        repaired = self.hub.run_hfget([*args, "--verify"], home=home)
        self.assertSucceeded(repaired)
        self.assertEqual(self.body_gets(), [SHARD])
        self.assertLocalDir(local, self.commit, self.source)
        self.assertEqual(sha256_of(local / SHARD), self.files[SHARD].sha256)
        self.assertSucceeded(self.hub.run_hfget(["verify", str(local)], home=home))

    def test_download_verify_hashes_the_snapshot_copy_in_a_cache_without_symlinks(self):
        home, cache = self.hub.new_dir("home"), self.hub.new_dir("cache")
        env = {"HF_HUB_DISABLE_SYMLINKS": "1"}
        args = ["download", REPO, "--cache-dir", cache]
        self.assertSucceeded(self.hub.run_hfget(args, home=home, env=env))
        repo_dir = cache / repo_folder_name(REPO)
        snapshot = repo_dir / "snapshots" / self.commit
        self.assertFalse((snapshot / SHARD).is_symlink())
        flip_byte(snapshot / SHARD, self.files[SHARD].size - 5)
        vouch_as_unchanged(snapshot, SHARD, self.files[SHARD].etag, record=repo_dir / "hfget" / "published.jsonl",
                           key=f"snapshots/{self.commit}/{SHARD}")
        self.hub.reset_logs()

        repaired = self.hub.run_hfget([*args, "--verify"], home=home, env=env)
        self.assertSucceeded(repaired)
        self.assertEqual(self.body_gets(), [SHARD], "exactly the rotted copy is fetched again, nothing else")
        self.assertEqual(sha256_of(snapshot / SHARD), self.files[SHARD].sha256)

    def test_the_repair_hint_after_a_partial_download_fetches_only_the_bad_file(self):
        home, cache = self.hub.new_dir("home"), self.hub.new_dir("cache")
        self.assertSucceeded(self.hub.run_hfget(["download", REPO, "--include", "*.safetensors", "--cache-dir", cache],
                                                home=home))
        blob = cache / repo_folder_name(REPO) / "blobs" / self.files[SHARD].etag
        flip_byte(blob, self.files[SHARD].size - 5)
        verify = self.hub.run_hfget(["verify", REPO, "--cache-dir", cache], home=home)
        self.assertExit(verify, 8)
        hints = [line for line in verify.stderr.splitlines() if line.startswith("hfget: to repair: ")]
        self.assertEqual(len(hints), 1, verify.stderr)
        command = shlex.split(hints[0].removeprefix("hfget: to repair: ").split(" (")[0])
        self.assertEqual(command[:4], ["hfget", "download", REPO, SHARD], hints[0])
        self.hub.reset_logs()
        self.assertSucceeded(self.hub.run_hfget(command[1:], home=home))
        self.assertEqual(self.body_gets(), [SHARD], "the hint must not widen the download to the whole repo")
        self.assertFalse((cache / repo_folder_name(REPO) / "snapshots" / self.commit / "config.json").exists())

    def test_verify_and_force_download_exclude_each_other(self):
        result = self.hub.run_hfget(["download", REPO, "--verify", "--force-download"])
        self.assertExit(result, 2)


if __name__ == "__main__":
    unittest.main()
