"""A full disk (docs/cli.md "Free space", docs/exit-codes.md 9): the pre-flight check refuses a download that
cannot fit, with one line giving both numbers (decimal and binary units) and the path, before anything is
fetched; --no-space-check overrides it; a disk that fills mid-download (ENOSPC) exits 9 with the partial
files kept and nothing corrupt under a final name, and once space is freed the same command resumes and
fetches less than the whole model.

The small filesystem is a tmpfs mounted in a temp dir, so these tests need root (or CAP_SYS_ADMIN); the
class is skipped, with the reason, where mounting is not allowed. Every mount is unmounted in cleanup.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import unittest
from pathlib import Path

from harness import KIB, MIB, sha256_of, source_files
from support import HfgetTestCase, files_under, repo_folder_name

REPO = "test-org/too-big"
TMPFS_SIZE = 3 * MIB
BIGGER_SIZE = "64m"
PAGE = 4096
EXIT_DISK_FULL = 9
# A resumed run may fetch a little more than what was missing (a chunk re-read, rounding).
SLACK_BYTES = 256 * KIB
COMMAND_TIMEOUT = 20   # seconds, for mount/umount

_BOTH_UNITS = re.compile(r"(\d+(?:\.\d+)? [kMGTP]?B) \((\d+(?:\.\d+)? [KMGTP]?iB)\)")


def _scaled(size: int, base: float, units: tuple[str, ...]) -> str:
    if size < base:
        return f"{size} B"
    value, unit = float(size), 0
    while round(value * 10) / 10 >= base and unit + 1 < len(units):
        value /= base
        unit += 1
    return f"{value:.1f} {units[unit]}"


def format_bytes_both(size: int) -> str:
    """hfget's '4.2 MB (4.0 MiB)' (docs/cli.md: sizes in both units), written again from its description."""
    if size < 1000:
        return f"{size} B"
    return (f"{_scaled(size, 1000.0, ('B', 'kB', 'MB', 'GB', 'TB', 'PB'))} "
            f"({_scaled(size, 1024.0, ('B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'))})")


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as error:
        return subprocess.CompletedProcess(argv, 255, "", str(error))


def mount_tmpfs(directory: Path, size: int | str) -> subprocess.CompletedProcess:
    return _run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(directory)])


def unmount(directory: Path) -> None:
    """umount, else a lazy umount; bounded; never raises (a cleanup)."""
    for argv in (["umount", str(directory)], ["umount", "-l", str(directory)]):
        if not os.path.ismount(directory):
            return
        _run(argv)


def stop_hfget(pid: int) -> None:
    """Cleanup: kill a detached hfget a failing test left running (only if it is an hfget), so that the tmpfs
    can be unmounted."""
    try:
        if b"hfget" not in Path(f"/proc/{pid}/cmdline").read_bytes():
            return
        os.kill(pid, signal.SIGKILL)
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass


def not_finished_count(error_line: str) -> int | None:
    """N in the disk-full error's '(N file(s) not finished; ...)'."""
    match = re.search(r"\((\d+) file\(s\) not finished", error_line)
    return int(match.group(1)) if match else None


def free_bytes(directory: Path) -> int:
    info = os.statvfs(directory)
    return info.f_bavail * info.f_frsize


def mount_problem() -> str | None:
    """Why a tmpfs cannot be mounted here, or None when it can."""
    if os.geteuid() != 0:
        return "mounting a small tmpfs needs root (CAP_SYS_ADMIN); run the integration tests as root"
    probe = Path(tempfile.mkdtemp(prefix="hfget-tmpfs-probe-"))
    try:
        mounted = mount_tmpfs(probe, "64k")
        if mounted.returncode != 0:
            return f"cannot mount a tmpfs here: {(mounted.stderr or mounted.stdout).strip()}"
        return None
    finally:
        unmount(probe)
        try:
            probe.rmdir()
        except OSError:
            pass


class DiskFullTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        problem = mount_problem()
        if problem:
            raise unittest.SkipTest(problem)
        super().setUpClass()
        # About 3.2 MB: larger than the 3 MiB tmpfs, but only slightly, so most of it fits before ENOSPC; the
        # four shards alone are larger than the tmpfs too.
        cls.source = cls.make_model("model", shards=4, shard_size=768 * KIB)
        cls.files = source_files(cls.source)
        cls.total = sum(f.size for f in cls.files.values())
        cls.shards = sorted(p for p in cls.files if p.endswith(".safetensors"))
        cls.shard_bytes = sum(cls.files[p].size for p in cls.shards)
        assert TMPFS_SIZE < cls.shard_bytes < cls.total < TMPFS_SIZE + 256 * KIB, (cls.shard_bytes, cls.total)
        cls.hub = cls.start_hub({REPO: cls.source})
        cls.commit = cls.hub.commit(REPO)

    def small_disk(self, size: int | str = TMPFS_SIZE) -> Path:
        directory = Path(tempfile.mkdtemp(prefix="tmpfs-", dir=self.workdir))
        mounted = mount_tmpfs(directory, size)
        if mounted.returncode != 0:
            self.skipTest(f"cannot mount a tmpfs: {(mounted.stderr or mounted.stdout).strip()}")
        self.addCleanup(unmount, directory)
        self.assertTrue(os.path.ismount(directory))
        return directory

    def grow(self, disk: Path) -> None:
        remounted = _run(["mount", "-o", f"remount,size={BIGGER_SIZE}", str(disk)])
        self.assertEqual(remounted.returncode, 0, remounted.stderr)
        self.assertGreater(free_bytes(disk), 2 * self.total)

    def target_args(self, layout: str, disk: Path) -> tuple[list, Path]:
        root = disk / ("model" if layout == "local" else "cache")
        return (["--local-dir", root] if layout == "local" else ["--cache-dir", root]), root

    def body_bytes_served(self) -> int:
        """File-body bytes sent since the last log reset: LFS bodies by nginx, regular files by the Hub."""
        cdn = sum(r["bytes"] for r in self.hub.cdn_requests() if r["status"] in (200, 206))
        hub = sum(r["bytes_sent"] for r in self.hub.hub_requests()
                  if "/resolve/" in r["path"] and r["status"] in (200, 206))
        return cdn + hub

    # -- what a failed run left ------------------------------------------------------------------------

    def assertNothingCorruptKept(self, layout: str, root: Path) -> int:
        """Every file under a final name is byte-identical to the source; every partial file is a prefix of
        its source file. Returns the content bytes kept (complete files + partial data)."""
        by_etag = {f.etag: (path, f) for path, f in self.files.items()}
        kept = 0
        partials = []
        if layout == "local":
            for name in files_under(root):
                if name.startswith(".cache/"):
                    if name.endswith(".hfget-partial"):
                        # .cache/huggingface/download/<dir>/<name>.<etag16>.<owner>.hfget-partial
                        stem = name[len(".cache/huggingface/download/"):-len(".hfget-partial")]
                        path, _, etag16 = stem.rpartition(".")[0].rpartition(".")
                        self.assertIn(path, self.files, f"partial file of an unknown path: {name}")
                        self.assertEqual(self.files[path].etag[:16], etag16, name)
                        partials.append((root / name, path))
                    continue
                self.assertIn(name, self.files, f"unexpected file {name}")
                self.assertEqual(sha256_of(root / name), self.files[name].sha256, f"{name} is corrupt")
                kept += self.files[name].size
        else:
            blobs = root / repo_folder_name(REPO) / "blobs"
            for name in files_under(blobs):
                if name.endswith(".hfget-journal"):   # a partial file's own bookkeeping, where there is one
                    continue
                etag = name.removesuffix(".hfget-partial").split(".")[0]   # <etag>.<owner>.hfget-partial
                self.assertIn(etag, by_etag, f"unexpected blob {name}")
                path, source = by_etag[etag]
                if name.endswith(".hfget-partial"):
                    partials.append((blobs / name, path))
                else:
                    self.assertEqual(sha256_of(blobs / name), source.sha256, f"blob of {path} is corrupt")
                    kept += source.size
            snapshot = root / repo_folder_name(REPO) / "snapshots" / self.commit
            for name in files_under(snapshot):
                self.assertTrue((snapshot / name).exists(), f"snapshot link {name} points to no blob")
        self.assertTrue(partials, "the file that hit ENOSPC must be kept as a partial file")
        for partial, path in partials:
            data = partial.read_bytes()
            self.assertLess(len(data), self.files[path].size, f"{partial.name} is no partial")
            self.assertEqual(data, (self.source / path).read_bytes()[:len(data)],
                             f"{partial.name} is not a prefix of {path}")
            kept += len(data)
        return kept

    # -- (a) the pre-flight check ------------------------------------------------------------------------

    def check_preflight_refuses(self, layout: str, quiet: bool) -> None:
        disk = self.small_disk()
        where, root = self.target_args(layout, disk)
        self.hub.reset_logs()
        result = self.hub.run_hfget(["download", REPO, *where, *(["-q"] if quiet else [])])
        self.assertExit(result, EXIT_DISK_FULL)
        self.assertEqual(result.stdout, "")
        lines = result.stderr.splitlines()
        errors = [line for line in lines if line.startswith("hfget: error: ")]
        self.assertEqual(len(errors), 1, f"one error line on stderr\n{result.describe()}")
        if quiet:
            self.assertEqual(lines, errors, f"-q: the error line and nothing else\n{result.describe()}")
        else:   # the other lines are the timestamped log lines of the progress view
            for line in lines:
                self.assertTrue(line in errors or re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ ", line), line)
        line = errors[0]
        self.assertIn(str(root), line, "the line names the path")
        # Both numbers, each in decimal and binary units (at this scale MB/MiB; GB/GiB for real models):
        # what is still to download, and what is free.
        numbers = _BOTH_UNITS.findall(line)
        self.assertEqual(len(numbers), 2, f"two sizes, each in both units: {line}")
        self.assertEqual(f"{numbers[0][0]} ({numbers[0][1]})", format_bytes_both(self.total), line)
        self.assertEqual(f"{numbers[1][0]} ({numbers[1][1]})", format_bytes_both(free_bytes(disk)), line)
        self.assertIn("--no-space-check", line, "the line says how to override the check")
        # Nothing was fetched or written.
        self.assertEqual(self.hub.cdn_requests(), [])
        self.assertEqual([r["path"] for r in self.hub.hub_requests() if "/resolve/" in r["path"]], [])
        if layout == "local":
            self.assertEqual([p for p in files_under(root) if not p.startswith(".cache/")], [])
        else:
            self.assertEqual(files_under(root / repo_folder_name(REPO) / "blobs"), [])
        self.assertEqual([p for p in files_under(disk) if p.endswith((".hfget-partial", ".incomplete"))], [])
        self.assertLess(TMPFS_SIZE - free_bytes(disk), 64 * KIB, "nothing of substance was written")

    def test_preflight_check_refuses_a_model_larger_than_the_disk_local_dir(self):
        self.check_preflight_refuses("local", quiet=False)

    def test_preflight_check_refuses_a_model_larger_than_the_disk_cache(self):
        self.check_preflight_refuses("cache", quiet=False)

    def test_preflight_check_quiet_prints_only_the_error_line(self):
        self.check_preflight_refuses("local", quiet=True)

    # -- (b) ENOSPC mid-download, then resume -----------------------------------------------------------------
    #
    # These runs fetch the four shards one at a time, so that the disk fills on the last file of the queue:
    # with files still queued (or in flight) when the disk fills, hfget exits 130 instead of 9 (the bug that
    # test_enospc_with_files_still_queued_exits_9 shows). Everything else is the same path.

    SHARDS_ONE_AT_A_TIME = ["--include", "*.safetensors", "--max-workers", "1"]

    def check_enospc_then_resume(self, layout: str, disk: Path, extra: list[str]) -> None:
        where, root = self.target_args(layout, disk)
        command = ["download", REPO, *where, *self.SHARDS_ONE_AT_A_TIME, *extra]
        self.hub.reset_logs()
        home = self.hub.new_dir("home")
        first = self.hub.run_hfget(command, home=home)
        self.assertExit(first, EXIT_DISK_FULL)
        self.assertEqual(first.stdout, "")
        self.assertNotIn("not enough space", first.stderr, "the download must have started")
        self.assertGreater(self.body_bytes_served(), 0, "the download must have started")
        errors = [line for line in first.stderr.splitlines() if line.startswith("hfget: error: ")]
        self.assertEqual(len(errors), 1, first.describe())
        # It names the file that did not fit: the repo path, or (in the cache) its blob.
        self.assertTrue(self.shards[-1] in errors[0] or self.files[self.shards[-1]].etag in errors[0], errors[0])
        self.assertIn("No space left on device", errors[0])
        kept = self.assertNothingCorruptKept(layout, root)
        self.assertGreater(kept, self.shard_bytes * 3 // 4, "most of the shards fitted before the disk was full")

        self.grow(disk)
        self.hub.reset_logs()
        second = self.hub.run_hfget(command, home=home)
        self.assertSucceeded(second)
        if layout == "local":
            self.assertLocalDir(root, self.commit, self.source, selected=self.shards)
        else:
            self.assertCacheSnapshot(root, REPO, self.commit, self.source, selected=self.shards)
        served = self.body_bytes_served()
        self.assertLess(served, self.shard_bytes, "the second run must fetch less than the whole download")
        self.assertLessEqual(served, self.shard_bytes - kept + SLACK_BYTES,
                             f"the second run fetched {served} bytes; {kept} of {self.shard_bytes} were kept")
        requests = self.hub.cdn_requests()
        self.assertEqual(len(requests), 1, f"only the shard that did not fit is fetched again: {requests}")
        self.assertEqual(requests[0]["status"], 206, requests)
        self.assertRegex(requests[0]["range"] or "", r"^bytes=[1-9]\d*-\d*$", "resumed from the kept bytes")

    def test_no_space_check_then_enospc_mid_download_local_dir(self):
        self.check_enospc_then_resume("local", self.small_disk(), ["--no-space-check"])

    def test_no_space_check_then_enospc_mid_download_cache(self):
        self.check_enospc_then_resume("cache", self.small_disk(), ["--no-space-check"])

    def test_disk_that_fills_although_the_preflight_check_passed(self):
        """The check counts file bytes; the filesystem also needs whole blocks per file and the metadata, so a
        disk with a few KiB more than the shards passes the check and still fills (ENOSPC, exit 9)."""
        disk = self.small_disk(-(-self.shard_bytes // PAGE) * PAGE + 2 * PAGE)
        self.assertGreaterEqual(free_bytes(disk), self.shard_bytes)
        self.check_enospc_then_resume("local", disk, [])

    # The whole model fetched one file at a time: the disk fills on model-00004 while the index and tokenizer
    # files are still queued; those must not turn the disk-full exit into "interrupted".
    def test_enospc_with_files_still_queued_exits_9(self):
        disk = self.small_disk()
        where, root = self.target_args("local", disk)
        result = self.hub.run_hfget(["download", REPO, *where, "--no-space-check", "--max-workers", "1"])
        self.assertNotEqual(result.code, 0, result.describe())
        self.assertIn("No space left on device", result.stderr)
        self.assertExit(result, EXIT_DISK_FULL)
        # The summary counts the files that are not there, not the ones published before the disk filled.
        published = [name for name in files_under(root) if not name.startswith(".cache/")]
        self.assertTrue(published, "some files fit before the disk filled")
        errors = [line for line in result.stderr.splitlines() if line.startswith("hfget: error: ")]
        self.assertEqual(len(errors), 1, result.describe())
        self.assertEqual(not_finished_count(errors[0]), len(self.files) - len(published),
                         f"{len(published)} of {len(self.files)} files were published: {errors[0]}")

    # -- (c) under --detach: the state record survives the full disk ------------------------------------------

    def test_enospc_under_detach_wait_exits_9_and_status_says_why(self):
        disk = self.small_disk()
        where, root = self.target_args("local", disk)
        home = self.hub.new_dir("home")
        launch = self.hub.run_hfget(["download", REPO, *where, "--no-space-check", "--max-workers", "1", "--detach"],
                                    home=home, timeout=30)
        self.assertExit(launch, 0)
        match = re.search(r"PID (\d+), log (.+)$", launch.stderr.strip())  # stdout holds only the path
        self.assertIsNotNone(match, launch.describe())
        self.addCleanup(stop_hfget, int(match.group(1)))
        log = match.group(2)

        waited = self.hub.run_hfget(["wait", root, "--timeout", "60"], home=home, timeout=90)
        self.assertExit(waited, EXIT_DISK_FULL)
        published = [name for name in files_under(root) if not name.startswith(".cache/")]
        self.assertTrue(published, "some files fit before the disk filled")

        state = json.loads(self.hub.run_hfget(["status", root, "--json"], home=home, timeout=30).stdout)
        self.assertEqual((state["state"], state["exit_code"]), ("failed", EXIT_DISK_FULL), state)
        self.assertIn("No space left on device", state["last_error"])
        self.assertEqual(state["files_done"], len(published), state)
        self.assertEqual(not_finished_count(state["last_error"]), len(self.files) - len(published), state)
        text = self.hub.run_hfget(["status", root], home=home, timeout=30)
        self.assertSucceeded(text)
        self.assertTrue(text.stdout.startswith("failed: "), text.stdout)
        self.assertIn("exit code 9", text.stdout)
        self.assertIn("No space left on device", text.stdout)
        self.assertIn(log, text.stdout, "status names the log")


if __name__ == "__main__":
    unittest.main()
