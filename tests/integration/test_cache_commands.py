"""`hfget ls`, `hfget cache ls`, `hfget cache rm` and `hfget rm --local-dir` (docs/cli.md) against the emulator.

The expected files, sizes and hashes come from the source directories (the oracle), never from hfget. Two
revisions of one repo share every blob but two, so sizes counted once and "frees only unshared blobs" can be
told apart from counting per snapshot. Every removal is checked against a snapshot of the filesystem around
its target (the rest of the cache, a sibling directory) taken before it ran.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import unittest
from pathlib import Path

from harness import KIB, source_files
from support import HfgetTestCase, files_under, repo_folder_name

REPO = "test-org/cached-model"
OTHER_REPO = "test-org/other-model"
EXIT_USAGE, EXIT_BUSY = 2, 10
_BOTH_UNITS = re.compile(r"freed (\d+ B|\d+\.\d [kMGTP]B \(\d+\.\d [KMGTP]iB\))")


def tree_state(root: Path) -> dict[str, tuple]:
    """Every entry below root without following symlinks: kind, size, and link target (to compare before/after)."""
    state = {}
    for directory, folders, names in os.walk(root):
        for name in folders + names:
            path = Path(directory) / name
            info = path.lstat()
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                state[relative] = ("link", os.readlink(path))
            elif path.is_dir():
                state[relative] = ("dir",)
            else:
                state[relative] = ("file", info.st_size, info.st_mtime_ns)
    return state


class CacheCommandsTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.main_source = cls.make_model("main", shards=2, shard_size=32 * KIB, seed=1)
        # dev: main with README.md changed and one file added; every other blob is shared.
        cls.dev_source = cls.workdir / "dev"
        shutil.copytree(cls.main_source, cls.dev_source)
        (cls.dev_source / "README.md").write_text("# The dev branch\n")
        (cls.dev_source / "dev-notes.txt").write_text("only on dev\n" * 100)
        cls.other_source = cls.make_model("other", shards=1, shard_size=8 * KIB, seed=3)
        cls.hub = cls.start_hub({REPO: cls.main_source, f"{REPO}@dev": cls.dev_source, OTHER_REPO: cls.other_source})
        cls.main_commit = cls.hub.commit(REPO, "main")
        cls.dev_commit = cls.hub.commit(REPO, "dev")
        cls.main_files = source_files(cls.main_source)
        cls.dev_files = source_files(cls.dev_source)

    # -- helpers -------------------------------------------------------------------------------------

    def download(self, *args) -> None:
        self.assertSucceeded(self.hub.run_hfget(["download", *map(str, args), "-q"]))

    def cache_with_both_revisions(self) -> Path:
        """A cache with main and dev of REPO, and OTHER_REPO beside them."""
        cache = self.hub.new_dir("cache")
        self.download(REPO, "--cache-dir", cache)
        self.download(REPO, "--revision", "dev", "--cache-dir", cache)
        self.download(OTHER_REPO, "--cache-dir", cache)
        return cache

    def outside(self, cache: Path, repo_id: str = REPO) -> dict[str, tuple]:
        """The state of the cache (the other repo, .locks/, CACHEDIR.TAG) and of a sibling folder of the cache,
        everything but the repo's own folder."""
        folder = repo_folder_name(repo_id)
        sibling = cache.parent / f"{cache.name}-sibling"
        if not sibling.exists():
            (sibling / "sub").mkdir(parents=True)
            (sibling / "sub" / "data.bin").write_bytes(b"sibling" * 100)
            os.symlink("sub/data.bin", sibling / "link")
        state = {f"cache/{path}": entry for path, entry in tree_state(cache).items()
                 if path != folder and not path.startswith(folder + "/")}
        state.update({f"sibling/{path}": entry for path, entry in tree_state(sibling).items()})
        return state

    def assertSaysOnlyWhatWouldGo(self, result) -> None:
        """A run that removed nothing (--dry-run, no --yes on a pipe) says what *would* go, never that it went."""
        lines = [line.removeprefix("[dry-run] ") for line in result.stdout.splitlines()]
        self.assertTrue(lines and lines[0].startswith("would remove "), result.describe())
        for line in lines:
            self.assertNotRegex(line, r"^(remove|removed|keep) |\bremoved:|\bfreed\b", result.describe())

    @staticmethod
    def distinct_size(files: dict) -> int:
        return sum({f.etag: f.size for f in files.values()}.values())

    # -- hfget ls ------------------------------------------------------------------------------------

    def test_ls_prints_every_file_with_sizes_hashes_totals_and_shards(self):
        result = self.hub.run_hfget(["ls", REPO])
        self.assertSucceeded(result)
        lines = result.stdout.splitlines()
        self.assertIn(self.main_commit, lines[0])
        for path, source in self.main_files.items():
            row = next((line for line in lines if line.split()[:1] == [path]), None)
            self.assertIsNotNone(row, f"{path} missing from ls:\n{result.stdout}")
            self.assertEqual(int(row.split()[1]), source.size)
            self.assertIn(source.sha256 if source.lfs else source.git_oid, row)
            self.assertIn(" lfs " if source.lfs else " - ", row)
        self.assertIn(f"{len(self.main_files)} of {len(self.main_files)} file(s)", result.stdout)
        self.assertIn("model-*-of-00002.safetensors: 2/2 shards in the repo (index model.safetensors.index.json)",
                      result.stdout)
        self.assertEqual(files_under(result.home), [], "ls writes nothing")

    def test_ls_json_matches_the_source_at_the_pinned_commit(self):
        result = self.hub.run_hfget(["ls", REPO, "--revision", "dev", "--json", "--exclude", "*.md"])
        self.assertSucceeded(result)
        document = json.loads(result.stdout)
        self.assertEqual(document["commit"], self.dev_commit)
        self.assertEqual(document["revision"], "dev")
        expected = {p: f for p, f in self.dev_files.items() if not p.endswith(".md")}
        self.assertEqual({f["path"] for f in document["files"]}, set(expected))
        for entry in document["files"]:
            source = expected[entry["path"]]
            self.assertEqual(entry["size"], source.size)
            self.assertEqual(entry["lfs"], source.lfs)
            self.assertEqual(entry["oid"] if not source.lfs else entry["sha256"],
                             source.git_oid if not source.lfs else source.sha256)
        self.assertEqual(document["total_bytes"], sum(f.size for f in expected.values()))
        self.assertEqual(document["files_in_repo"], len(self.dev_files))
        self.assertEqual(document["shard_sets"], [{"pattern": "model-*-of-00002.safetensors",
                                                   "index": "model.safetensors.index.json", "expected": 2,
                                                   "in_repo": 2, "selected": 2, "complete": True}])

    def test_ls_offline_answers_from_the_recorded_listing_without_a_request(self):
        cache = self.hub.new_dir("cache")
        self.download(REPO, "--cache-dir", cache, "--include", "*.json")   # records the whole commit's listing
        self.hub.reset_logs()
        offline = {"HF_HUB_CACHE": cache, "HF_HUB_OFFLINE": "1"}
        result = self.hub.run_hfget(["ls", REPO, "--json"], env=offline)
        self.assertSucceeded(result)
        document = json.loads(result.stdout)
        self.assertEqual((document["commit"], document["offline"]), (self.main_commit, True))
        self.assertEqual({f["path"] for f in document["files"]}, set(self.main_files), "the whole commit")
        text = self.hub.run_hfget(["ls", REPO, "--revision", self.main_commit], env=offline)
        self.assertSucceeded(text)
        self.assertIn("offline", text.stdout.splitlines()[0])
        # Never recorded here: an error at once, not a minute of retries against the network.
        missing = self.hub.run_hfget(["ls", REPO, "--revision", "dev"], env={**offline, "HFGET_RETRY_BASE_MS": "2000"})
        self.assertExit(missing, 7)
        self.assertIn("HF_HUB_OFFLINE", missing.stderr)
        self.assertLess(missing.elapsed, 1.5)
        self.assertEqual(self.hub.hub_requests(), [], "offline: no request at all")

    def test_ls_of_an_unknown_repo_exits_3(self):
        self.assertExit(self.hub.run_hfget(["ls", "test-org/no-such-repo"]), 3)

    # -- hfget cache ls ------------------------------------------------------------------------------

    def test_cache_ls_counts_blobs_shared_by_two_revisions_once(self):
        cache = self.cache_with_both_revisions()
        result = self.hub.run_hfget(["cache", "ls", "--cache-dir", cache, "--json"])
        self.assertSucceeded(result)
        document = json.loads(result.stdout)
        self.assertEqual(document["warnings"], [])
        repos = {repo["repo_id"]: repo for repo in document["repos"]}
        self.assertEqual(set(repos), {REPO, OTHER_REPO})
        repo = repos[REPO]
        both = {**self.main_files, **{f"dev/{p}": f for p, f in self.dev_files.items()}}
        self.assertEqual(repo["size_on_disk"], self.distinct_size(both))
        self.assertEqual(repo["files"], len({f.etag for f in both.values()}))
        revisions = {revision["commit"]: revision for revision in repo["revisions"]}
        self.assertEqual(set(revisions), {self.main_commit, self.dev_commit})
        self.assertEqual(revisions[self.main_commit]["refs"], ["main"])
        self.assertEqual(revisions[self.dev_commit]["refs"], ["dev"])
        self.assertEqual(revisions[self.main_commit]["size_on_disk"], self.distinct_size(self.main_files))
        self.assertEqual(revisions[self.dev_commit]["files"], len(self.dev_files))
        self.assertEqual(document["size_on_disk"], sum(r["size_on_disk"] for r in document["repos"]))

        text = self.hub.run_hfget(["cache", "ls", "--cache-dir", cache])
        self.assertSucceeded(text)
        for needle in (REPO, OTHER_REPO, self.main_commit, self.dev_commit):
            self.assertIn(needle, text.stdout)

    def test_cache_ls_flags_a_revision_whose_download_is_not_finished(self):
        cache = self.hub.new_dir("cache")
        self.download(REPO, "--cache-dir", cache)
        # As an interrupted download leaves it: a shard not published yet (no snapshot link, no blob), its bytes
        # so far in a partial file.
        repo_dir = cache / repo_folder_name(REPO)
        shard = next(p for p in sorted(self.main_files) if p.endswith(".safetensors"))
        etag = self.main_files[shard].etag
        (repo_dir / "snapshots" / self.main_commit / shard).unlink()
        (repo_dir / "blobs" / etag).rename(repo_dir / "blobs" / f"{etag}.hfget-partial")
        document = json.loads(self.hub.run_hfget(["cache", "ls", "--cache-dir", cache, "--json"]).stdout)
        revision = document["repos"][0]["revisions"][0]
        self.assertEqual((revision["incomplete"], revision["files_missing"], revision["partial_files"]), (True, 1, 1),
                         revision)
        self.assertEqual(revision["files"], len(self.main_files) - 1)
        text = self.hub.run_hfget(["cache", "ls", "--cache-dir", cache])
        self.assertSucceeded(text)
        line = next(line for line in text.stdout.splitlines() if self.main_commit in line)
        self.assertIn("INCOMPLETE: 1 file(s) missing, 1 partial file(s)", line)

        self.download(REPO, "--cache-dir", cache)   # resumed and finished: no longer flagged
        revision = json.loads(self.hub.run_hfget(["cache", "ls", "--cache-dir", cache, "--json"]).stdout)[
            "repos"][0]["revisions"][0]
        self.assertEqual((revision["incomplete"], revision["files_missing"], revision["partial_files"]), (False, 0, 0))
        self.assertNotIn("INCOMPLETE", self.hub.run_hfget(["cache", "ls", "--cache-dir", cache]).stdout)

    def test_cache_ls_warns_about_what_scan_cache_dir_rejects(self):
        cache = self.hub.new_dir("cache")
        self.download(OTHER_REPO, "--cache-dir", cache, "--include", "*.json")
        (cache / "kernels--org--kernel" / "snapshots").mkdir(parents=True)
        (cache / "models--org--refs-only" / "refs").mkdir(parents=True)
        result = self.hub.run_hfget(["cache", "ls", "--cache-dir", cache, "--json"])
        self.assertSucceeded(result)
        warnings = {Path(w["path"]).name: w["message"] for w in json.loads(result.stdout)["warnings"]}
        self.assertEqual(set(warnings), {"kernels--org--kernel", "models--org--refs-only"})
        self.assertIn("Snapshots dir doesn't exist", warnings["models--org--refs-only"])
        self.assertEqual(result.stderr.count("hfget: warning:"), 2)

    # -- hfget cache rm ------------------------------------------------------------------------------

    def test_cache_rm_of_one_revision_frees_only_its_unshared_blobs(self):
        cache = self.cache_with_both_revisions()
        untouched = self.outside(cache)
        result = self.hub.run_hfget(["cache", "rm", REPO, "--revision", "dev", "--cache-dir", cache, "--yes"])
        self.assertSucceeded(result)
        self.assertRegex(result.stdout, _BOTH_UNITS)
        repo_dir = cache / repo_folder_name(REPO)
        self.assertEqual(sorted(os.listdir(repo_dir / "snapshots")), [self.main_commit])
        self.assertEqual(sorted(os.listdir(repo_dir / "refs")), ["main"])
        # Exactly main's blobs are left: the shared ones stay, dev's own two are gone.
        self.assertCacheSnapshot(cache, REPO, self.main_commit, self.main_source)
        self.assertEqual(self.outside(cache), untouched, "nothing outside the repo folder changed")
        scan = json.loads(self.hub.run_hfget(["cache", "ls", "--cache-dir", cache, "--json"]).stdout)
        self.assertEqual(scan["warnings"], [])

    def test_cache_rm_of_the_whole_repo_leaves_the_rest_of_the_cache(self):
        cache = self.cache_with_both_revisions()
        untouched = self.outside(cache)
        dry = self.hub.run_hfget(["cache", "rm", REPO, "--cache-dir", cache, "--dry-run"])
        self.assertSucceeded(dry)
        self.assertIn("[dry-run]", dry.stdout)
        self.assertTrue((cache / repo_folder_name(REPO)).is_dir(), "--dry-run removes nothing")
        refused = self.hub.run_hfget(["cache", "rm", REPO, "--cache-dir", cache])
        self.assertExit(refused, EXIT_USAGE)
        self.assertIn("--yes", refused.stderr)
        self.assertTrue((cache / repo_folder_name(REPO)).is_dir(), "no --yes on a pipe removes nothing")
        self.assertSaysOnlyWhatWouldGo(refused)
        self.assertSaysOnlyWhatWouldGo(dry)

        result = self.hub.run_hfget(["cache", "rm", REPO, "--cache-dir", cache, "--yes"])
        self.assertSucceeded(result)
        self.assertRegex(result.stdout, _BOTH_UNITS)
        self.assertFalse((cache / repo_folder_name(REPO)).exists())
        self.assertEqual(self.outside(cache), untouched, "the other repo, .locks/ and CACHEDIR.TAG are untouched")
        self.assertExit(self.hub.run_hfget(["cache", "rm", REPO, "--cache-dir", cache, "--yes"]), 3)

    def test_cache_rm_and_rm_are_refused_while_a_download_holds_the_lock(self):
        cache = self.hub.new_dir("cache")
        self.download(REPO, "--cache-dir", cache, "--include", "*.json")
        local_dir = self.hub.new_dir("local") / "model"
        self.download(REPO, "--local-dir", local_dir, "--include", "*.json")
        for lock_path, command in (
                (cache / repo_folder_name(REPO) / "hfget" / "download.lock",
                 ["cache", "rm", REPO, "--cache-dir", cache, "--yes"]),
                (local_dir / ".cache" / "huggingface" / "hfget" / "download.lock",
                 ["rm", "--local-dir", local_dir, "--yes"])):
            with open(lock_path, "r+") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)   # as a running download holds it
                lock.truncate(0)
                lock.write(str(os.getpid()))
                lock.flush()
                before = (tree_state(cache), tree_state(local_dir))
                result = self.hub.run_hfget(command)
                self.assertExit(result, EXIT_BUSY)
                self.assertIn(f"PID {os.getpid()}", result.stderr)
                self.assertEqual((tree_state(cache), tree_state(local_dir)), before,
                                 "nothing removed while the lock is held")

    # -- hfget rm --local-dir ------------------------------------------------------------------------

    def test_rm_local_dir_removes_exactly_what_hfget_wrote(self):
        parent = self.hub.new_dir("parent")
        sibling = parent / "sibling"
        sibling.mkdir()
        (sibling / "data.txt").write_text("not hfget's")
        local_dir = parent / "model"
        self.download(REPO, "--local-dir", local_dir)
        (local_dir / "my-notes.txt").write_text("mine")
        untouched = tree_state(sibling)

        refused = self.hub.run_hfget(["rm", "--local-dir", local_dir])
        self.assertExit(refused, EXIT_USAGE)
        self.assertSaysOnlyWhatWouldGo(refused)
        result = self.hub.run_hfget(["rm", "--local-dir", local_dir, "--yes"])
        self.assertSucceeded(result)
        self.assertEqual(files_under(local_dir), ["my-notes.txt"], "only the file hfget did not write is left")
        self.assertIn("my-notes.txt", result.stdout)
        self.assertRegex(result.stdout, _BOTH_UNITS)
        self.assertEqual(tree_state(sibling), untouched)

        # Without a file of the user's, the directory itself goes.
        self.download(REPO, "--local-dir", local_dir)
        (local_dir / "my-notes.txt").unlink()
        self.assertSucceeded(self.hub.run_hfget(["rm", "--local-dir", local_dir, "--yes"]))
        self.assertFalse(local_dir.exists())
        self.assertEqual(sorted(os.listdir(parent)), ["sibling"])
        self.assertEqual(tree_state(sibling), untouched)

    def test_rm_refuses_a_directory_hfget_did_not_create(self):
        foreign = self.hub.new_dir("foreign")
        (foreign / "model.safetensors").write_bytes(b"\0" * 64)
        metadata = foreign / ".cache" / "huggingface" / "download" / "model.safetensors.metadata"
        metadata.parent.mkdir(parents=True)
        metadata.write_text(f"{self.main_commit}\n{'0' * 64}\n1712656091.123\n")   # as `hf download` writes
        before = tree_state(foreign)
        result = self.hub.run_hfget(["rm", "--local-dir", foreign, "--yes"])
        self.assertExit(result, EXIT_USAGE)
        self.assertIn("not created by hfget", result.stderr)
        self.assertEqual(tree_state(foreign), before)


if __name__ == "__main__":
    unittest.main()
