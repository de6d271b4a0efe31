"""Interrupted downloads: after SIGKILL the same command resumes every file from the bytes already on disk
(the second run fetches about what was missing) and the result is byte-identical; partial data never has a
final name; SIGTERM and SIGINT exit 143 and 130 and leave a resumable state.

nginx's limit_rate slows the CDN so that a run can be interrupted mid-transfer."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
import unittest
from pathlib import Path

from harness import KIB, MIB, source_files, wait_until
from support import HfgetTestCase, files_under, repo_folder_name

REPO = "test-org/slow-model"
RATE_PER_CONNECTION = "1m"
# Bytes a resumed run may fetch on top of what was missing (a chunk re-read for safety, rounding).
SLACK_BYTES = 512 * KIB


def disk_usage(root: Path, only_partials: bool = False) -> int:
    """Bytes actually stored under root (allocated blocks, so a sparse partial file counts what was written);
    with only_partials, in *.hfget-partial files only."""
    total = 0
    for directory, _, names in os.walk(root):
        for name in names:
            if only_partials and not name.endswith(".hfget-partial"):
                continue
            try:
                total += os.lstat(os.path.join(directory, name)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


class ResumeTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=4, shard_size=3 * MIB // 2)
        cls.files = source_files(cls.source)
        cls.total = sum(f.size for f in cls.files.values())
        cls.hub = cls.start_hub({REPO: cls.source}, limit_rate=RATE_PER_CONNECTION)
        cls.commit = cls.hub.commit(REPO)

    def start_and_interrupt(self, args: list[str], target: Path, sig: int, home: Path):
        """Start hfget, let it fetch part of the repo, then send `sig`. Returns the finished run."""
        running = self.hub.start_hfget(args, home=home)
        self.addCleanup(running.ensure_stopped)
        started = time.monotonic()

        def far_enough():
            elapsed = time.monotonic() - started
            if running.process.poll() is not None:
                return True
            # Part of the repo, and some of it part-way: a file published a moment ago and the next not yet
            # started would leave nothing to resume from.
            return (elapsed >= 0.3 and disk_usage(target) >= self.total * 2 // 5
                    and disk_usage(target, only_partials=True) >= 64 * KIB) or elapsed >= 3.0

        wait_until(far_enough, timeout=30, what="hfget to fetch part of the repo")
        self.assertIsNone(running.process.poll(), "hfget finished before it could be interrupted")
        running.signal(sig)
        return running.wait(timeout=30)

    def body_bytes_served(self) -> int:
        """File-body bytes sent since the last log reset: LFS bodies by nginx, regular files by the Hub."""
        # A throttled nginx notices a killed client only at its next send, so let the log settle longer.
        cdn = sum(r["bytes"] for r in self.hub.cdn_requests(settle=1.5) if r["status"] in (200, 206))
        hub = sum(r["bytes_sent"] for r in self.hub.hub_requests()
                  if "/resolve/" in r["path"] and r["status"] in (200, 206))
        return cdn + hub

    def bytes_on_disk(self, target: Path, layout: str) -> int:
        """File-content bytes kept by a killed run: complete files plus *.hfget-partial data.

        Counted from the disk, not from what the servers sent: data still in socket buffers at the kill
        is legitimately lost. min(size, allocated) keeps a preallocated or sparse partial file honest.
        """
        total = 0
        for name in files_under(target):
            path = target / name
            if path.is_symlink():
                continue
            is_content = (name.endswith(".hfget-partial")
                          or (layout == "cache" and "/blobs/" in name)
                          or (layout == "local" and name in self.files))
            if is_content:
                stat = path.stat()
                total += min(stat.st_size, stat.st_blocks * 512)
        return total

    def assertFinalNamesHoldOnlyCompleteFiles(self, target: Path, layout: str) -> None:
        """Whatever exists under a final name after an interruption is complete and correct."""
        if layout == "local":
            for path, f in self.files.items():
                final = target / path
                if final.exists():
                    self.assertEqual(final.stat().st_size, f.size, f"{path} is partial under its final name")
        else:
            blobs = target / repo_folder_name(REPO) / "blobs"
            for name in files_under(blobs):
                complete = [f for f in self.files.values() if f.etag == name]
                if complete:
                    self.assertEqual((blobs / name).stat().st_size, complete[0].size, f"blob {name} is partial")
        names = files_under(target)
        self.assertEqual([n for n in names if n.endswith(".incomplete")], [], "partials must be *.hfget-partial")

    def pretend_a_reboot_reused_the_pids(self, target: Path) -> None:
        """Renames the killed run's partial files and journals to name a live process that started after they
        were last written, as after a reboot, when the old PID belongs to someone else."""
        newer = subprocess.Popen(["sleep", "300"])
        self.addCleanup(newer.wait)
        self.addCleanup(newer.kill)
        an_hour_ago = time.time() - 3600
        renamed = 0
        for name in files_under(target):
            path = target / name
            match = re.search(r"-(\d+)-([0-9a-f]{8})\.hfget-(partial|journal)$", path.name)
            if not match:
                continue
            os.utime(path, (an_hour_ago, an_hour_ago))
            path.rename(path.with_name(f"{path.name[:match.start()]}-{newer.pid}-{match.group(2)}.hfget-{match.group(3)}"))
            renamed += 1
        self.assertTrue(renamed, "the killed run left partial files to rename")

    def check_resume_after_sigkill(self, layout: str, reboot: bool = False) -> None:
        home = self.hub.new_dir("home")
        target = self.hub.new_dir(layout)
        args = ["download", REPO, "--local-dir" if layout == "local" else "--cache-dir", target, "--max-workers", "2"]
        self.hub.reset_logs()
        killed = self.start_and_interrupt(args, target, signal.SIGKILL, home)
        self.assertEqual(killed.code, -signal.SIGKILL)
        self.assertFinalNamesHoldOnlyCompleteFiles(target, layout)
        kept = self.bytes_on_disk(target, layout)
        on_disk = {n: (target / n).stat().st_size for n in files_under(target) if not (target / n).is_symlink()}
        self.assertGreater(kept, 2 * SLACK_BYTES, "the first run kept too little before it was killed "
                           "to tell resuming from starting over")
        self.assertLess(kept, self.total, "the first run completed before it was killed")
        partials = [n for n in files_under(target) if n.endswith(".hfget-partial")]
        self.assertTrue(partials, "the killed run left resumable *.hfget-partial files")
        if reboot:
            self.pretend_a_reboot_reused_the_pids(target)

        self.hub.reset_logs()
        resumed = self.hub.run_hfget(args, home=home, timeout=120)
        self.assertSucceeded(resumed)
        fetched = self.body_bytes_served()
        second_run = [(r["path"], r["range"], r["bytes"]) for r in self.hub.cdn_requests()]
        self.assertLessEqual(fetched, self.total - kept + SLACK_BYTES,
                             f"the second run re-fetched data already on disk ({kept} B of {self.total} B were "
                             f"on disk, the second run fetched {fetched} B)\non disk after the kill: {on_disk}\n"
                             f"second run's CDN requests: {second_run}")
        # A file the kill left part-way is resumed with a Range. One it left complete but not yet published
        # (killed between its hash check and its rename) needs no request at all: "resuming at 1.5 MiB of
        # 1.5 MiB", then done.
        part_way = [line for line in resumed.stderr.splitlines()
                    if (m := re.search(r": resuming at (.+) of (.+)$", line)) and m.group(1) != m.group(2)]
        if part_way:
            ranged = [r for r in second_run if r[1] and not r[1].startswith("bytes=0-")]
            self.assertTrue(ranged, f"the second run resumed with Range requests: {second_run}\n{part_way}")
        if layout == "local":
            self.assertLocalDir(target, self.commit, self.source)
        else:
            self.assertCacheSnapshot(target, REPO, self.commit, self.source)

    def test_resume_after_sigkill_in_local_dir(self):
        self.check_resume_after_sigkill("local")

    def test_resume_after_sigkill_in_cache(self):
        self.check_resume_after_sigkill("cache")

    def test_resume_after_a_reboot_whose_new_process_has_the_old_pid(self):
        self.check_resume_after_sigkill("local", reboot=True)

    def check_signal_exit(self, sig: int, expected_code: int) -> None:
        home = self.hub.new_dir("home")
        target = self.hub.new_dir("local")
        args = ["download", REPO, "--local-dir", target, "--max-workers", "2"]
        interrupted = self.start_and_interrupt(args, target, sig, home)
        self.assertExit(interrupted, expected_code)
        self.assertLess(interrupted.elapsed, 25, "hfget must stop promptly on a signal")
        self.assertEqual(interrupted.stdout, "", "an interrupted run prints no snapshot path")
        self.assertFinalNamesHoldOnlyCompleteFiles(target, "local")
        resumed = self.hub.run_hfget(args, home=home, timeout=120)
        self.assertSucceeded(resumed)
        self.assertLocalDir(target, self.commit, self.source)

    def test_sigterm_exits_143_and_leaves_a_resumable_state(self):
        self.check_signal_exit(signal.SIGTERM, 143)

    def test_sigint_exits_130_and_leaves_a_resumable_state(self):
        self.check_signal_exit(signal.SIGINT, 130)


if __name__ == "__main__":
    unittest.main()
