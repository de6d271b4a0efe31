"""The HF cache on filesystems without symlinks (docs/layout.md, "Filesystems without symlinks").

huggingface_hub (file_download.py: are_symlinks_supported, _create_symlink) probes the repo folder once for
symlinks; where they fail, or with HF_HUB_DISABLE_SYMLINKS=1, a file it downloads is *moved* into
snapshots/<commit>/<path> (blobs/ keeps nothing of it) and a blob already in blobs/ is *copied* there. A
snapshot file that exists counts as cached. hfget writes the same layout, and reads it back (download, cache
ls, cache rm, verify).

The variable covers the logic everywhere (CI is a plain container). Where this machine can mount an exFAT
image through FUSE (root, /dev/fuse, a loop device, exfatprogs and exfat-fuse), the same checks run on it,
without the variable: exFAT refuses symlink() (ENOSYS), and the probe has to find that out by itself.
Expected bytes come from the source directories (the oracle), never from hfget.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from harness import KIB, sha256_of, source_files, wait_until
from support import HfgetTestCase, files_under, repo_folder_name

REPO = "test-org/no-symlinks"
EXIT_VERIFICATION_FAILED = 8
NO_SYMLINKS = {"HF_HUB_DISABLE_SYMLINKS": "1"}


class NoSymlinksChecks:
    """Checks shared by the variable and the FAT mount: `cache_root()` gives a fresh cache, `env` the variables."""

    env: dict = {}

    def cache_root(self) -> Path:
        raise NotImplementedError

    def download(self, cache: Path, *args, home: Path | None = None, env: dict | None = None):
        result = self.hub.run_hfget(["download", REPO, "--cache-dir", cache, *map(str, args)], home=home,
                                    env={**self.env, **(env or {})})
        self.assertSucceeded(result)
        return result

    def file_requests(self) -> list[str]:
        """The files whose bytes were asked for since the last reset (Hub /resolve/ or CDN)."""
        resolved = [r["file"] for r in self.hub.hub_requests() if "/resolve/" in r["path"]]
        cdn = [r["path"] for r in self.hub.cdn_requests() if r["status"] in (200, 206)]
        return resolved + cdn

    def assertRealFileSnapshot(self, cache: Path, commit: str, source: Path, blobs: set[str] = frozenset()) -> Path:
        """Every file a real file with the source's bytes; blobs/ holds exactly `blobs` (none after a fresh
        download: each was moved into the snapshot)."""
        sources = source_files(source)
        repo_dir = cache / repo_folder_name(REPO)
        snapshot = repo_dir / "snapshots" / commit
        self.assertEqual(files_under(snapshot), sorted(sources))
        for path, expected in sources.items():
            self.assertFalse((snapshot / path).is_symlink(), f"{path} must be a real file")
            self.assertTrue((snapshot / path).is_file(), f"{path} missing")
            self.assertEqual(sha256_of(snapshot / path), expected.sha256, f"{path}: content differs from the source")
        self.assertEqual(set(files_under(repo_dir / "blobs")), set(blobs), "blobs/")
        self.assertEqual((repo_dir / "refs" / "main").read_bytes(), self.main_commit.encode())
        self.assertTreeCache(repo_dir / "trees" / f"{commit}.json", sources)
        self.assertNoPartials(cache)
        self.assertEqual([p for p in files_under(snapshot) if p.endswith(".hfget-tmp")], [])
        return snapshot

    # -- download -------------------------------------------------------------------------------------

    def test_download_moves_every_file_into_the_snapshot_and_a_rerun_fetches_nothing(self):
        cache = self.cache_root()
        first = self.download(cache)
        snapshot = self.assertRealFileSnapshot(cache, self.main_commit, self.main_source)
        self.assertStdoutIsPath(first, snapshot)
        self.hub.reset_logs()
        self.download(cache, home=first.home)
        self.assertEqual(self.file_requests(), [], "a rerun finds every file complete")
        self.assertRealFileSnapshot(cache, self.main_commit, self.main_source)

    def test_an_interrupted_download_resumes_and_lands_in_the_snapshot(self):
        # The partial file and its journal live in blobs/ and are reopened and extended by the resume; the
        # finished file is then moved into the snapshot.
        cache = self.cache_root()
        shard = "model-00001-of-00002.safetensors"
        self.hub.set_faults([{"path": shard, "kind": "drop", "after_bytes": 20 * KIB, "times": -1}])
        try:
            failed = self.hub.run_hfget(["download", REPO, "--cache-dir", cache, "--retries", "0"], env=self.env)
        finally:
            self.hub.clear_faults()
        self.assertNotEqual(failed.code, 0, failed.describe())
        blobs = cache / repo_folder_name(REPO) / "blobs"
        partials = [p for p in files_under(blobs) if p.endswith(".hfget-partial")]
        self.assertEqual(len(partials), 1, files_under(blobs))
        self.assertGreater((blobs / partials[0]).stat().st_size, 0)
        self.hub.reset_logs()
        self.download(cache, home=failed.home)
        sha256 = self.main_files[shard].sha256
        ranges = [r["range"] for r in self.hub.cdn_requests() if r["path"].strip("/") == sha256]
        self.assertTrue(ranges and all(not (r or "").startswith("bytes=0-") for r in ranges),
                        f"the shard must be resumed, not fetched again from byte 0: {ranges}")
        self.assertRealFileSnapshot(cache, self.main_commit, self.main_source)

    def test_a_copy_changed_on_disk_is_fetched_again(self):
        cache = self.cache_root()
        first = self.download(cache)
        snapshot = cache / repo_folder_name(REPO) / "snapshots" / self.main_commit
        shard = "model-00001-of-00002.safetensors"
        # Same size, other bytes, a new file (as an editor saves it): only hfget's record can tell.
        edited = snapshot / "edited.tmp"
        data = bytearray((snapshot / shard).read_bytes())
        data[-100] ^= 0xFF
        edited.write_bytes(bytes(data))
        os.replace(edited, snapshot / shard)
        self.hub.reset_logs()
        self.download(cache, home=first.home)
        self.assertIn(shard, " ".join(self.file_requests()))
        self.assertRealFileSnapshot(cache, self.main_commit, self.main_source)

    def test_a_second_revision_copies_the_files_it_shares_instead_of_fetching_them(self):
        # The Python client moved each blob into main's snapshot and fetches shared files again for dev;
        # hfget copies its own checked copies.
        cache = self.cache_root()
        first = self.download(cache)
        self.hub.reset_logs()
        self.download(cache, "--revision", "dev", home=first.home)
        changed = {p for p, f in self.dev_files.items()
                   if f.size > 0 and (p not in self.main_files or self.main_files[p].etag != f.etag)}
        self.assertEqual(changed, {"README.md", "dev-notes.txt"})
        fetched = self.file_requests()
        expected = sorted(changed | {self.dev_files[p].sha256 for p in changed if self.dev_files[p].lfs})
        self.assertEqual(sorted(r.strip("/") for r in fetched), expected, "only the files dev changed are fetched")
        self.assertRealFileSnapshot(cache, self.dev_commit, self.dev_source)
        self.assertRealFileSnapshot(cache, self.main_commit, self.main_source)

    def test_the_python_clients_layout_is_hashed_once_and_not_fetched(self):
        # What `hf download` leaves with HF_HUB_DISABLE_SYMLINKS=1: refs, real files, nothing in blobs/, and
        # no record of hfget's.
        cache = self.cache_root()
        repo_dir = cache / repo_folder_name(REPO)
        for path in self.main_files:
            (repo_dir / "snapshots" / self.main_commit / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.main_source / path, repo_dir / "snapshots" / self.main_commit / path)
        (repo_dir / "refs").mkdir()
        (repo_dir / "refs" / "main").write_text(self.main_commit)
        (repo_dir / "blobs").mkdir()
        self.hub.reset_logs()
        first = self.download(cache)
        self.assertEqual(self.file_requests(), [], "files already in the snapshot were fetched")
        self.assertRealFileSnapshot(cache, self.main_commit, self.main_source)
        # Offline, the copies hfget hashed are complete without reading them again.
        offline = self.download(cache, home=first.home, env={"HF_HUB_OFFLINE": "1"})
        self.assertStdoutIsPath(offline, repo_dir / "snapshots" / self.main_commit)

    # -- cache ls, cache rm, verify -------------------------------------------------------------------

    def test_cache_ls_counts_each_copy_and_cache_rm_removes_a_revision_with_its_copies(self):
        cache = self.cache_root()
        self.download(cache)
        self.download(cache, "--revision", "dev")
        scan = json.loads(self.hub.run_hfget(["cache", "ls", "--cache-dir", cache, "--json"]).stdout)
        self.assertEqual(scan["warnings"], [])
        (repo,) = scan["repos"]
        revisions = {r["commit"]: r for r in repo["revisions"]}
        # No blob is shared: each snapshot holds its own copy, counted as scan_cache_dir counts it.
        main_size = sum(f.size for f in self.main_files.values())
        dev_size = sum(f.size for f in self.dev_files.values())
        self.assertEqual(revisions[self.main_commit]["size_on_disk"], main_size)
        self.assertEqual(revisions[self.dev_commit]["files"], len(self.dev_files))
        self.assertEqual(repo["size_on_disk"], main_size + dev_size)
        self.assertEqual(repo["files"], len(self.main_files) + len(self.dev_files))

        removed = self.hub.run_hfget(["cache", "rm", REPO, "--revision", "dev", "--cache-dir", cache, "--yes"])
        self.assertSucceeded(removed)
        repo_dir = cache / repo_folder_name(REPO)
        self.assertFalse((repo_dir / "snapshots" / self.dev_commit).exists())
        self.assertFalse((repo_dir / "refs" / "dev").exists())
        self.assertRealFileSnapshot(cache, self.main_commit, self.main_source)
        scan = json.loads(self.hub.run_hfget(["cache", "ls", "--cache-dir", cache, "--json"]).stdout)
        self.assertEqual(scan["warnings"], [])
        self.assertEqual(scan["repos"][0]["size_on_disk"], main_size)

    def test_verify_passes_on_copies_and_names_a_damaged_one(self):
        cache = self.cache_root()
        first = self.download(cache)
        verify = ["verify", REPO, "--cache-dir", cache, "--json"]
        result = self.hub.run_hfget(verify, home=first.home, env=self.env)
        self.assertSucceeded(result)
        self.assertTrue(json.loads(result.stdout)["ok"])
        shard = cache / repo_folder_name(REPO) / "snapshots" / self.main_commit / "model-00002-of-00002.safetensors"
        with open(shard, "r+b") as handle:
            handle.seek(-10, os.SEEK_END)
            byte = handle.read(1)
            handle.seek(-10, os.SEEK_END)
            handle.write(bytes([byte[0] ^ 0xFF]))
        result = self.hub.run_hfget(verify, home=first.home, env=self.env)
        self.assertExit(result, EXIT_VERIFICATION_FAILED)
        problems = json.loads(result.stdout)["problems"]
        self.assertIn("model-00002-of-00002.safetensors", {p["path"] for p in problems if p["check"] == "hashes"})


class NoSymlinksTestBase(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.main_source = cls.make_model("main", shards=2, shard_size=64 * KIB, seed=5)
        # dev: main with README.md changed and one file added; every other file is shared.
        cls.dev_source = cls.workdir / "dev"
        shutil.copytree(cls.main_source, cls.dev_source)
        (cls.dev_source / "README.md").write_text("# The dev branch\n")
        (cls.dev_source / "dev-notes.txt").write_text("only on dev\n" * 100)
        # The built-in CDN: body faults reach LFS files there (test_an_interrupted_download_resumes...).
        cls.hub = cls.start_hub({REPO: cls.main_source, f"{REPO}@dev": cls.dev_source}, cdn="emulator")
        cls.main_commit = cls.hub.commit(REPO, "main")
        cls.dev_commit = cls.hub.commit(REPO, "dev")
        cls.main_files = source_files(cls.main_source)
        cls.dev_files = source_files(cls.dev_source)


class DisableSymlinksVariableTest(NoSymlinksChecks, NoSymlinksTestBase):
    """HF_HUB_DISABLE_SYMLINKS=1 on a filesystem that has symlinks."""

    env = NO_SYMLINKS

    def cache_root(self) -> Path:
        return self.hub.new_dir("cache")

    def test_a_blob_already_in_blobs_is_copied_not_fetched(self):
        # main downloaded with symlinks (on a filesystem that has them); dev then without: its files shared
        # with main come from blobs/, which keeps them for main's links.
        cache = self.cache_root()
        first = self.download(cache, env={"HF_HUB_DISABLE_SYMLINKS": None})
        main_blobs = {f.etag for f in self.main_files.values()}
        self.hub.reset_logs()
        self.download(cache, "--revision", "dev", home=first.home)
        shared = {p for p, f in self.dev_files.items() if p in self.main_files and self.main_files[p].etag == f.etag}
        self.assertGreater(len(shared), 5)
        fetched = self.file_requests()
        self.assertEqual([p for p in shared if any(p in r or self.dev_files[p].sha256 in r for r in fetched)], [],
                         f"files already in blobs/ were fetched: {fetched}")
        self.assertRealFileSnapshot(cache, self.dev_commit, self.dev_source, blobs=main_blobs)
        main_snapshot = cache / repo_folder_name(REPO) / "snapshots" / self.main_commit
        self.assertTrue(all((main_snapshot / p).is_symlink() for p in self.main_files), "main keeps its links")

    def test_without_the_variable_the_cache_links_as_before(self):
        cache = self.cache_root()
        self.download(cache, env={"HF_HUB_DISABLE_SYMLINKS": None})
        self.assertCacheSnapshot(cache, REPO, self.main_commit, self.main_source)

    def test_the_warning_variable_alone_disables_nothing(self):
        cache = self.cache_root()
        self.download(cache, env={"HF_HUB_DISABLE_SYMLINKS": None, "HF_HUB_DISABLE_SYMLINKS_WARNING": "1"})
        self.assertCacheSnapshot(cache, REPO, self.main_commit, self.main_source)


def _exfat_mount_unavailable() -> str | None:
    """Why an exFAT image cannot be mounted here through FUSE, or None when it can."""
    if os.geteuid() != 0:
        return "not root"
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse"
    for tool in ("mkfs.exfat", "mount.exfat-fuse", "losetup", "fusermount"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: exfatprogs, exfat-fuse, util-linux, fuse)"
    return None


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


class ExfatFilesystemTest(NoSymlinksChecks, NoSymlinksTestBase):
    """An exFAT image on a loop device, mounted with exfat-fuse, whose symlink() fails (ENOSYS); no variable:
    hfget has to find out by itself. (fusefat would do for FAT, but it refuses to extend a file it reopened,
    which every resume and journal does; the kernel's vfat has no such limit, and no vfat module is loaded
    here.)"""

    env = {"HF_HUB_DISABLE_SYMLINKS": None}
    mount_point: Path
    loop_device: str | None = None

    @classmethod
    def setUpClass(cls):
        reason = _exfat_mount_unavailable()
        if reason:
            raise unittest.SkipTest(f"cannot mount an exFAT image: {reason}")
        super().setUpClass()
        image = cls.workdir / "exfat.img"
        with open(image, "wb") as handle:
            handle.truncate(64 * 1024 * 1024)
        made = _run(["mkfs.exfat", str(image)])
        if made.returncode != 0:
            raise unittest.SkipTest(f"mkfs.exfat failed: {made.stderr.strip()}")
        attached = _run(["losetup", "--find", "--show", str(image)])
        if attached.returncode != 0:
            raise unittest.SkipTest(f"no loop device: {attached.stderr.strip()}")
        cls.loop_device = attached.stdout.strip()
        cls.addClassCleanup(cls.detach)
        cls.mount_point = Path(tempfile.mkdtemp(prefix="mnt-", dir=cls.workdir))
        mounted = _run(["mount.exfat-fuse", cls.loop_device, str(cls.mount_point)])
        if mounted.returncode != 0 or not os.path.ismount(cls.mount_point):
            raise unittest.SkipTest(f"exfat-fuse could not mount the image: {mounted.stderr.strip()}")
        cls.addClassCleanup(cls.unmount)
        cls.caches = 0

    @classmethod
    def unmount(cls) -> None:
        _run(["fusermount", "-u", str(cls.mount_point)])
        wait_until(lambda: not os.path.ismount(cls.mount_point), timeout=10, what="the exFAT image to unmount")

    @classmethod
    def detach(cls) -> None:
        if cls.loop_device:
            _run(["losetup", "--detach", cls.loop_device])

    def cache_root(self) -> Path:
        type(self).caches += 1
        cache = self.mount_point / f"cache{self.caches}"
        cache.mkdir()
        return cache

    def test_the_filesystem_refuses_symlinks(self):
        with self.assertRaises(OSError):
            os.symlink("target", self.mount_point / "probe")

    def check_snapshots_on_another_filesystem(self, env: dict) -> None:
        # The cache on a filesystem with symlinks, its snapshots/ folder a mount of the exFAT image: blobs/
        # (the partial files) and the snapshots are different filesystems, so a file cannot be renamed from
        # one to the other (EXDEV); it is copied and its blob removed.
        cache = self.hub.new_dir("cache")
        snapshots = cache / repo_folder_name(REPO) / "snapshots"
        snapshots.mkdir(parents=True)
        bound = _run(["mount", "--bind", str(self.cache_root()), str(snapshots)])
        if bound.returncode != 0:
            self.skipTest(f"cannot bind-mount a folder of the image: {bound.stderr.strip()}")
        self.addCleanup(_run, ["umount", str(snapshots)])
        first = self.download(cache, env=env)
        self.assertRealFileSnapshot(cache, self.main_commit, self.main_source)
        self.hub.reset_logs()
        self.download(cache, home=first.home, env=env)
        self.assertEqual(self.file_requests(), [], "a rerun finds every file complete")

    def test_snapshots_on_another_filesystem_that_refuses_the_links(self):
        # hfget's probe (in hfget/, beside blobs/) finds symlinks; the first link into snapshots/ is refused.
        self.check_snapshots_on_another_filesystem({})

    def test_snapshots_on_another_filesystem_with_the_variable(self):
        self.check_snapshots_on_another_filesystem(NO_SYMLINKS)


if __name__ == "__main__":
    unittest.main()
