"""Security issue 14: what a hostile Hub or a malicious repo on the real Hub must never achieve. Each test
fails on hfget before the fix it names and passes after; docs/reliability.md ("Attack classes") lists them.

- git's own files (`.git/config` → the server's `core.fsmonitor` runs on the next `git status`): refused.
- the local dir's metadata folder (`.cache/huggingface/`): never written from a listing, and a metadata or
  record file alone never vouches for bytes (a later download hashes them; `hfget rm` keeps them).
- sizes whose sums overflow, and a petabyte file: refused, or bounded memory, one error line.
- escape sequences, bidi overrides, C1 controls and invalid UTF-8 from the server or the repo: never printed
  raw (error lines, retry lines, JSON events, verify's report).
- a token the server echoes back: never printed.

Reuses the sandbox of test_hostile_server (nothing outside the target may change, peak RSS bounded).
"""

from __future__ import annotations

import json
import struct
import time
import unittest
from pathlib import Path

from support import files_under, repo_folder_name
from test_hostile_server import (GIT_OID, LFS_OID, REPO, SANITIZER_BUILD, SHARD, TOKEN, HostileTestCase,
                                 file_entry)

ESC_BYTES = (b"\x1b", b"\x07", b"\x9b", b"\xc2\x9b", "\u202e".encode())


class ListingAttackTest(HostileTestCase):
    """Crafted listings added to the genuine one."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        response = cls.hub.api(f"/api/models/{REPO}/tree/{cls.commit}?recursive=true", token=TOKEN)
        cls.real_entries = response.json()

    def serve_with(self, *hostile: dict) -> None:
        self.hub.set_tree_pages(REPO, [{"body": json.dumps([*self.real_entries, *hostile])}])

    def assertNoRawControls(self, text: str | bytes) -> None:
        data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
        for raw in ESC_BYTES:
            self.assertNotIn(raw, data, f"{raw!r} reached the output raw:\n{data[-2000:]!r}")

    # -- 1: git's own files -------------------------------------------------------------------------------

    def test_git_components_are_refused_in_any_spelling_git_refuses(self):
        for path in (".git/config", ".GIT/config", "sub/.git/hooks/pre-commit", ".Git./config", ".git /x",
                     "GIT~1/config"):
            with self.subTest(path):
                self.serve_with(file_entry(path))
                for mode in ("local", "cache"):
                    result, target, _ = self.run_contained(mode=mode)
                    self.assertOneClearError(result, 7, ".git")
                    self.assertOnlyBookkeeping(target, mode)

    def test_a_git_checkout_as_target_keeps_its_config(self):
        config = b"[core]\n\trepositoryformatversion = 0\n"

        def checkout(target: Path, _parent: Path) -> None:
            (target / ".git").mkdir(parents=True)
            (target / ".git" / "config").write_bytes(config)

        self.serve_with(file_entry(".git/config", size=40))
        result, target, _ = self.run_contained(mode="local", prepare=checkout)
        self.assertOneClearError(result, 7, ".git/config")
        self.assertEqual((target / ".git" / "config").read_bytes(), config)

    # -- 2: the metadata folder ---------------------------------------------------------------------------

    def test_listed_paths_under_the_metadata_folder_are_skipped_with_a_warning(self):
        hostile = [file_entry(f".cache/huggingface/download/{SHARD}.metadata", size=80),
                   file_entry(".cache/huggingface/.gitignore", size=0),
                   file_entry(".CACHE/HuggingFace/hfget/0123.json", size=10)]
        self.serve_with(*hostile)
        for mode in ("local", "cache"):
            with self.subTest(mode=mode):
                self.hub.reset_logs()
                result, target, _ = self.run_contained(mode=mode)
                self.assertSucceeded(result)
                self.assertIn("skipping 3 listed file(s) under .cache/huggingface/", result.stderr)
                requested = {r["file"] for r in self.hub.requests() if r.get("file")}
                self.assertFalse(requested & {h["path"] for h in hostile}, "a skipped path was requested")
                if mode == "local":
                    self.assertLocalDir(target, self.commit, self.source)
                    self.assertEqual((target / ".cache" / "huggingface" / ".gitignore").read_text(), "*")
                else:
                    self.assertCacheSnapshot(target, REPO, self.commit, self.source)

    # -- 3: sizes -----------------------------------------------------------------------------------------

    def test_sizes_whose_sum_overflows_are_refused(self):
        petabyte = 1 << 50
        entries = [file_entry(f"huge/{i:05}.bin", size=petabyte, lfs={"oid": LFS_OID, "size": petabyte})
                   for i in range(16384)]
        self.hub.set_tree_pages(REPO, [{"body": json.dumps(entries)}])
        result, target, _ = self.run_contained(mode="local")
        self.assertOneClearError(result, 7, "adds up to more than")
        self.assertOnlyBookkeeping(target, "local")

    def test_a_petabyte_file_costs_no_memory_and_fails_with_one_line(self):
        petabyte = 1 << 50
        self.serve_with(file_entry("huge.bin", size=petabyte, lfs={"oid": LFS_OID, "size": petabyte}))
        # Without the space check the file is opened and its ranges queued: the queue must not follow the size.
        result, target, _ = self.run_contained("--no-space-check", "--include", "huge.bin", mode="local")
        self.assertNotEqual(result.code, 0)
        self.assertNotIn(result.code, (134, 139, -6, -11), f"crashed\n{result.describe()}")
        errors = [line for line in result.stderr.splitlines() if line.startswith("hfget: error:")]
        self.assertEqual(len(errors), 1, result.describe())
        self.assertIn("huge.bin", errors[0])
        self.assertNotIn("terminate called", result.stderr)
        state = json.loads((target / ".cache" / "huggingface" / "hfget" / "state.json").read_text())
        self.assertEqual(state["state"], "failed", state)
        if not SANITIZER_BUILD:
            # A queue built up front for the whole size took ~290 MB more; one queued span costs nothing.
            self.assertLess(self.last_rss_mb, 100, f"peak RSS {self.last_rss_mb} MiB\n{result.describe()}")

    # -- 4: what reaches the terminal ---------------------------------------------------------------------

    def test_escape_sequences_in_a_listing_are_never_printed_raw(self):
        cases = {
            "a bad entry's path, quoted before the listing is checked":
                file_entry("\x1b]0;pwned\x07\x1b[2J.bin", size="ten"),
            "a bidi override in a path": file_entry("evil\u202egpj.exe"),
            "a C1 control in a path": file_entry("c1\u009b2J.bin"),
        }
        for name, entry in cases.items():
            with self.subTest(name):
                self.serve_with(entry)
                result, target, _ = self.run_contained(mode="local")
                self.assertOneClearError(result, 7)
                self.assertNoRawControls(result.stderr)
                self.assertOnlyBookkeeping(target, "local")

    def test_an_escape_sequence_in_a_content_range_is_never_printed_raw(self):
        hostile = "bytes 0-1/2\x1b]0;pwned\x07\x1b[2J\xff\xfe"
        self.hub.set_faults([{"path": SHARD, "kind": "bad_range", "times": -1, "content_range_text": hostile}])
        for progress in ("lines", "json"):
            with self.subTest(progress=progress):
                log = self.hub.new_dir("log") / "download.log"
                result, cache, _ = self.run_contained("--progress", progress, "--log-file", log, mode="cache")
                # Retried, then exit 7 naming the header, in both modes (JSON mode once exited 1, not retrying).
                self.assertExit(result, 7)
                self.assertIn("Content-Range", result.stderr)
                self.assertNoRawControls(result.stderr)
                self.assertNoRawControls(log.read_bytes())
                if progress == "json":
                    for line in result.stderr.splitlines():
                        json.loads(line)  # every line is still a JSON object

    # -- 7: the token -------------------------------------------------------------------------------------

    def test_a_token_the_server_echoes_back_is_never_printed(self):
        with self.subTest("in an error message"):
            self.hub.set_tree_pages(REPO, [{"status": 401, "body": "{}",
                                            "headers": {"X-Error-Message": f"Bearer {TOKEN} is not valid"}}])
            result, _, _ = self.run_contained(mode="local")
            self.assertNotEqual(result.code, 0)
            self.assertNotIn(TOKEN, result.stdout + result.stderr)
            self.assertIn("***", result.stderr)
        with self.subTest("in a URL the Hub redirected to"):
            self.hub.set_tree_pages(REPO, [{"status": 500, "body": "{}"}])
            self.hub.set_faults([{"path": f"/api/models/{REPO}/tree/*", "kind": "redirect", "target": "api",
                                  "times": 1, "location": f"{{hub}}/api/models/{REPO}/tree/{self.commit}"
                                                          f"?recursive=true&echo={TOKEN}"}])
            log = self.hub.new_dir("log") / "download.log"
            result, _, _ = self.run_contained("--log-file", log, "-v", mode="local")
            self.assertExit(result, 7)
            self.assertIn("echo=***", result.stderr)
            self.assertNotIn(TOKEN, result.stdout + result.stderr)
            self.assertNotIn(TOKEN, log.read_text())


class LocalDirTrustTest(HostileTestCase):
    """What an earlier hostile listing (or any other writer) may have left in the metadata folder."""

    def download(self, target: Path):
        result = self.hub.run_hfget(["download", REPO, "--local-dir", target, "--token", TOKEN])
        self.assertSucceeded(result)
        return result

    def forge_metadata(self, target: Path, path: str, etag: str) -> None:
        metadata = target / ".cache" / "huggingface" / "download" / f"{path}.metadata"
        metadata.parent.mkdir(parents=True, exist_ok=True)
        metadata.write_text(f"{self.commit}\n{etag}\n{time.time() + 5:.6f}\n")

    def test_metadata_alone_does_not_make_junk_complete(self):
        target = self.hub.new_dir("case") / "target"
        self.download(target)
        victim = "sub/x.bin"
        size = (target / victim).stat().st_size
        (target / victim).unlink()
        (target / victim).write_bytes(b"J" * size)           # same size, other bytes
        self.forge_metadata(target, victim, self.files[victim].etag)  # the genuine etag, a fresh timestamp
        again = self.download(target)
        self.assertEqual((target / victim).read_bytes(), (self.source / victim).read_bytes(),
                         f"the junk was kept as complete\n{again.describe()}")
        self.assertLocalDir(target, self.commit, self.source)

    def test_rm_keeps_a_users_file_that_a_forged_record_names(self):
        target = self.hub.new_dir("case") / "target"
        self.download(target)
        (target / "notes.txt").write_text("the user's own notes\n")
        record = target / ".cache" / "huggingface" / "hfget" / f"{self.commit}.json"
        data = json.loads(record.read_text())
        data["selected"] = sorted([*data["selected"], "notes.txt"])
        record.write_text(json.dumps(data))
        self.forge_metadata(target, "notes.txt", GIT_OID)
        result = self.hub.run_hfget(["rm", "--local-dir", target, "--yes"])
        self.assertSucceeded(result)
        self.assertEqual((target / "notes.txt").read_text(), "the user's own notes\n")
        self.assertFalse((target / SHARD).exists(), "hfget's own download is removed")
        self.assertIn("notes.txt", result.stdout)

    def test_rm_still_removes_a_download_older_than_the_published_record(self):
        target = self.hub.new_dir("case") / "target"
        self.download(target)
        (target / ".cache" / "huggingface" / "hfget" / "published.jsonl").unlink()  # as an older hfget left it
        result = self.hub.run_hfget(["rm", "--local-dir", target, "--yes"])
        self.assertSucceeded(result)
        self.assertFalse(target.exists(), f"checked by hash, then removed\n{result.describe()}\n{files_under(target)}")


def strings_in(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings_in(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings_in(item)]
    return []


def safetensors_bytes(header: dict, data: bytes) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


class HostileModelFilesTest(HostileTestCase):
    """A malicious repo on the real Hub needs no hostile server: its safetensors headers and its index are
    enough to put escape sequences into the download's final checks and into verify's report."""

    EVIL = "\x1b]0;pwned\x07\x1b[2J\u202e"

    @classmethod
    def make_repo(cls) -> Path:
        root = cls.workdir / "evil-model"
        root.mkdir()
        header = {cls.EVIL: {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}  # spans 4 bytes, needs 8
        (root / "model.safetensors").write_bytes(safetensors_bytes(header, b"\0" * 4))
        index = {"metadata": {"total_size": 4}, "weight_map": {cls.EVIL + "-missing": "model.safetensors"}}
        (root / "model.safetensors.index.json").write_text(json.dumps(index))
        (root / "config.json").write_text("{}")
        return root

    def assertNoRawControls(self, result) -> None:
        output = result.stdout.encode("utf-8", "surrogateescape") + result.stderr.encode("utf-8", "surrogateescape")
        for raw in ESC_BYTES:
            self.assertNotIn(raw, output, f"{raw!r} reached the output raw\n{result.describe()}")

    def test_tensor_names_and_index_keys_are_never_printed_raw(self):
        target = self.hub.new_dir("case") / "target"
        downloaded = self.hub.run_hfget(["download", REPO, "--local-dir", target, "--token", TOKEN])
        self.assertEqual(downloaded.code, 8, downloaded.describe())  # the final checks name the bad tensor
        self.assertIn("\\x1b]0;pwned", downloaded.stderr)
        self.assertNoRawControls(downloaded)
        for extra in ([], ["--json"]):
            with self.subTest(json=bool(extra)):
                result = self.hub.run_hfget(["verify", target, *extra])
                self.assertEqual(result.code, 8, result.describe())
                self.assertNoRawControls(result)
                if extra:
                    report = json.loads(result.stdout)
                    self.assertTrue(any(self.EVIL in text for text in strings_in(report)),
                                    "the JSON report keeps the name itself, in JSON's own escapes")
                else:
                    self.assertIn("\\x1b]0;pwned", result.stdout)


if __name__ == "__main__":
    unittest.main()
