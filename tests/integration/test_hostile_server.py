"""A hostile or broken server must not make hfget write outside its target, hang, exhaust memory or leak the
token. Every case checks: the documented exit code, one clear `hfget: error:` line naming the cause, and that
nothing changed outside the target (a temp HOME and the target's parent are snapshotted before and after;
the target itself may hold only hfget's own bookkeeping, never a file under a name the server chose).

The emulator serves crafted tree pages verbatim (POST /_emulator/tree-pages), hostile bodies ("extra",
"short", "bad_range", "ignore_range" faults on its built-in CDN) and redirect chains ("redirect" faults,
/_hop); see tests/hub/README.md, "Hostile servers". docs/reliability.md lists these cases as a fault matrix.
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import subprocess
import threading
import time
import unittest
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from harness import KIB, MIB, HfgetResult, clean_hfget_env, hfget_binary, http_request, source_files
from support import HfgetTestCase, files_under, repo_folder_name

REPO = "hostile-org/model"
SHARD = "model-00001-of-00001.safetensors"
TOKEN = "hf_HostileTestToken_9f8e7d6c5b4a3210"
MAX_RSS_MB = 300            # hfget must stay below this whatever the server sends


def _is_sanitizer_build() -> bool:
    """ASan keeps freed memory in quarantine (256 MB by default) and adds shadow memory: RSS means nothing there."""
    try:
        with open(hfget_binary(), "rb") as binary:
            return b"__asan_init" in binary.read()
    except (OSError, unittest.SkipTest):
        return False


SANITIZER_BUILD = _is_sanitizer_build()
RUN_TIMEOUT = 90.0
GIT_OID = "0123456789abcdef0123456789abcdef01234567"
LFS_OID = "89abcdef" * 8


def known_bug(test):
    """@unittest.expectedFailure for a bug in hfget (named in the test's comment); with
    HFGET_SHOW_KNOWN_BUGS=1 the test runs as a normal one, to see how it fails."""
    return test if os.environ.get("HFGET_SHOW_KNOWN_BUGS") == "1" else unittest.expectedFailure(test)


# ---------------------------------------------------------------------------------------------- helpers

def file_entry(path, size=10, oid=GIT_OID, lfs=None) -> dict:
    entry = {"type": "file", "oid": oid, "size": size, "path": path}
    if lfs is not None:
        entry["lfs"] = lfs
    return entry


def fs_snapshot(root: Path, exclude: Path | None = None) -> dict[str, tuple]:
    """Every entry below root (not root itself): kind, size, mtime and symlink target; `exclude` is skipped."""
    result = {}
    if not root.exists():
        return result
    for directory, dirs, names in os.walk(root):
        here = Path(directory)
        if exclude is not None:
            dirs[:] = [d for d in dirs if here / d != exclude]
            names = [n for n in names if here / n != exclude]
        for name in [*dirs, *names]:
            path = here / name
            info = path.lstat()
            kind = "link" if path.is_symlink() else "dir" if path.is_dir() else "file"
            result[path.relative_to(root).as_posix()] = (
                kind, info.st_size if kind == "file" else 0, info.st_mtime_ns,
                os.readlink(path) if kind == "link" else None)
    return result


def all_paths(root: Path) -> list[str]:
    """Files, symlinks and directories below root, relative and sorted."""
    found = []
    for directory, dirs, names in os.walk(root):
        for name in [*dirs, *names]:
            found.append((Path(directory) / name).relative_to(root).as_posix())
    return sorted(found)


def _peak_rss_kib(pid: int) -> int | None:
    """VmHWM of a running process: the peak of its own memory since exec (None once it has exited)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def run_measured(args: list, *, endpoint: str, home: Path, env: dict | None = None,
                 timeout: float = RUN_TIMEOUT) -> tuple[HfgetResult, int]:
    """Run hfget to completion; also return its peak RSS in MiB.

    The peak is VmHWM, read while it runs (a high-water mark: the last reading misses at most the last
    20 ms). wait4's ru_maxrss would be simpler but counts the pages of this Python process that the fork
    copied before the exec: after a test built a big listing, that alone is 100 MB. ru_maxrss stands in only
    when hfget ended before the first reading.
    """
    started = time.monotonic()
    with open(home.parent / f".{home.name}.out", "w+b") as out, open(home.parent / f".{home.name}.err", "w+b") as err:
        process = subprocess.Popen([hfget_binary(), *map(str, args)], env=clean_hfget_env(home, endpoint, env),
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        deadline = started + timeout
        peak_kib = 0
        while True:
            reading = _peak_rss_kib(process.pid)
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if reading is not None:
                peak_kib = max(peak_kib, reading)
            if time.monotonic() > deadline:
                process.kill()
                os.wait4(process.pid, 0)
                process.returncode = -9
                raise AssertionError(f"hfget {' '.join(map(str, args))} did not finish within {timeout}s")
            time.sleep(0.02)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        result = HfgetResult(process.returncode, out.read().decode(errors="replace"),
                             err.read().decode(errors="replace"), home, time.monotonic() - started)
    return result, (peak_kib or usage.ru_maxrss) // 1024


class Collector:
    """A small HTTP server on a given host that records every request (headers included) and answers with a
    redirect to its `to` query parameter, or 404. Stands for a third host a hostile server redirects to."""

    def __init__(self, host: str) -> None:
        self.requests: list[dict] = []
        collector = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                collector.requests.append({"path": self.path, "headers": dict(self.headers.items())})
                target = parse_qs(urlsplit(self.path).query).get("to", [""])[0]
                self.send_response(302 if target else 404)
                if target:
                    self.send_header("Location", target)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_HEAD = do_GET

        self.server = http.server.ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://%s:%d" % self.server.server_address[:2]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)


class Listener:
    """A TCP socket that only counts the connections made to it (a target no request may reach)."""

    def __init__(self, host: str) -> None:
        self.sock = socket.socket()
        self.sock.bind((host, 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.host = host
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.accepted += 1
            connection.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


class HostileTestCase(HfgetTestCase):
    """Runs hfget in a fresh parent dir + HOME and checks that nothing outside the target changed."""

    cdn = "emulator"

    @classmethod
    def make_repo(cls) -> Path:
        root = cls.make_model("model", shards=1, shard_size=1 * MIB)
        (root / "sub" / "deeper").mkdir(parents=True)
        (root / "sub" / "x.bin").write_bytes(bytes(range(256)) * 400)      # LFS (*.bin)
        (root / "sub" / "deeper" / "y.txt").write_text("hello from a nested folder\n")
        return root

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_repo()
        cls.files = source_files(cls.source)
        cls.hub = cls.start_hub({REPO: cls.source}, cdn=cls.cdn, private={REPO: TOKEN})
        cls.commit = cls.hub.commit(REPO, token=TOKEN)

    def setUp(self):
        self.hub.clear_faults()
        self.hub.clear_tree_pages()
        self.hub.reset_logs()
        self.addCleanup(self.hub.clear_faults)
        self.addCleanup(self.hub.clear_tree_pages)

    # -- running --------------------------------------------------------------------------------------

    def run_contained(self, *extra: str, mode: str = "local", prepare=None, env: dict | None = None,
                      endpoint: str | None = None, timeout: float = RUN_TIMEOUT, token: bool = True):
        """hfget download REPO into parent/target (local dir) or parent/cache (--cache-dir); returns
        (result, target, parent). Fails the test if anything outside the target changed, if /etc/x appeared,
        or if hfget's peak RSS passed MAX_RSS_MB."""
        parent = self.hub.new_dir("case")
        home = self.hub.new_dir("home")
        target = parent / ("target" if mode == "local" else "cache")
        if prepare:
            prepare(target, parent)
        where = ["--local-dir", target] if mode == "local" else ["--cache-dir", target]
        args = ["download", REPO, *where, "--retries", "2", *(["--token", TOKEN] if token else []), *extra]
        etc_x_before = os.path.lexists("/etc/x")
        before = (fs_snapshot(home), fs_snapshot(parent, exclude=target))
        result, rss_mb = run_measured(args, endpoint=endpoint or self.hub.url, home=home, env=env, timeout=timeout)
        after = (fs_snapshot(home), fs_snapshot(parent, exclude=target))
        self.assertEqual(after[0], before[0], f"hfget changed files in HOME\n{result.describe()}")
        self.assertEqual(after[1], before[1], f"hfget changed files next to the target\n{result.describe()}")
        self.assertEqual(os.path.lexists("/etc/x"), etc_x_before, "hfget created /etc/x")
        if not SANITIZER_BUILD:
            self.assertLessEqual(rss_mb, MAX_RSS_MB, f"hfget peaked at {rss_mb} MiB RSS\n{result.describe()}")
        self.last_rss_mb = rss_mb
        return result, target, parent

    # -- assertions -----------------------------------------------------------------------------------

    def assertNothingPublished(self, cache: Path, path: str) -> None:
        """Cache layout: no blob and no snapshot entry for `path` (its partial file may stay)."""
        blob = f"{repo_folder_name(REPO)}/blobs/{self.files[path].etag}"
        self.assertNotIn(blob, files_under(cache), "a refused body never gets the final name")
        self.assertFalse(os.path.lexists(cache / repo_folder_name(REPO) / "snapshots" / self.commit / path))

    def assertOneClearError(self, result: HfgetResult, code: int, *needles: str) -> str:
        """Exit `code`, nothing on stdout, exactly one `hfget: error:` line, containing every needle."""
        self.assertExit(result, code)
        self.assertEqual(result.stdout, "", "stdout is for the snapshot path only")
        errors = [line for line in result.stderr.splitlines() if line.startswith("hfget: error:")]
        self.assertEqual(len(errors), 1, f"expected one error line\n{result.describe()}")
        for needle in needles:
            self.assertIn(needle.lower(), errors[0].lower(), f"the error line must name the cause\n{result.describe()}")
        self.assertNotIn("Traceback", result.stderr)
        self.assertNotIn("terminate called", result.stderr)
        return errors[0]

    def assertOnlyBookkeeping(self, target: Path, mode: str = "local", user_files: list[str] = ()) -> None:
        """The target holds hfget's metadata and `user_files` (which the test put there), nothing else."""
        if mode == "local":
            meta = ".cache/huggingface"
            allowed_prefixes = (f"{meta}/hfget/",)
            allowed = {".cache", meta, f"{meta}/.gitignore", f"{meta}/CACHEDIR.TAG", f"{meta}/hfget",
                       f"{meta}/download", f"{meta}/trees"}
        else:
            folder = repo_folder_name(REPO)
            allowed_prefixes = (f"{folder}/hfget/",)
            allowed = {"CACHEDIR.TAG", ".locks", f".locks/{folder}", folder, f"{folder}/hfget", f"{folder}/blobs",
                       f"{folder}/snapshots", f"{folder}/refs", f"{folder}/trees"}
        user = set(user_files)
        for ancestor in list(user):
            parts = ancestor.split("/")
            user.update("/".join(parts[:i]) for i in range(1, len(parts)))
        unexpected = [p for p in all_paths(target) if p not in allowed and p not in user
                      and not p.startswith(allowed_prefixes)]
        self.assertEqual(unexpected, [], f"the target holds more than hfget's bookkeeping: {unexpected}")


# ----------------------------------------------------------------------------------------------- listings

class HostileListingTest(HostileTestCase):
    """Crafted tree listings: refused before anything touches the disk, in both layouts."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        response = cls.hub.api(f"/api/models/{REPO}/tree/{cls.commit}?recursive=true", token=TOKEN)
        cls.real_entries = response.json()   # the genuine listing; hostile entries are added to it

    def listing(self, *hostile: dict) -> list[dict]:
        return [*self.real_entries, *hostile]

    def serve(self, *pages: dict) -> None:
        self.hub.set_tree_pages(REPO, list(pages))

    def assertRefused(self, code: int, *needles: str, modes=("local", "cache"), extra=(), timeout=RUN_TIMEOUT):
        results = []
        for mode in modes:
            with self.subTest(mode=mode):
                result, target, _ = self.run_contained(*extra, mode=mode, timeout=timeout)
                self.assertOneClearError(result, code, *needles)
                self.assertOnlyBookkeeping(target, mode)
                results.append(result)
        return results

    def check_entries(self, cases: dict[str, tuple[list[dict], tuple[str, ...]]]) -> None:
        for name, (entries, needles) in cases.items():
            with self.subTest(name):
                self.serve({"body": json.dumps(self.listing(*entries))})
                self.assertRefused(7, *needles)

    # -- paths ------------------------------------------------------------------------------------------

    def test_parent_directory_components(self):
        self.check_entries({
            "../x": ([file_entry("../escape.bin")], ("../escape.bin", "..")),
            "a/../../x": ([file_entry("sub/../../escape.bin")], ("escape.bin", "..")),
            "trailing ..": ([file_entry("sub/..")], ("sub/..",)),
            "bare ..": ([file_entry("..")], ("..",)),
        })

    def test_absolute_paths(self):
        outside = self.hub.new_dir("abs-target") / "escape.bin"   # an absolute path the snapshot would see
        self.check_entries({
            "/etc/x": ([file_entry("/etc/x")], ("/etc/x", "absolute")),
            "into a watched dir": ([file_entry(str(outside))], ("absolute",)),
            "drive letter": ([file_entry("C:/x.bin")], ("C:/x.bin",)),
        })
        self.assertFalse(outside.exists())

    def test_backslashes(self):
        self.check_entries({
            "a\\..\\x": ([file_entry("sub\\..\\..\\escape.bin")], ("backslash",)),
            "sub\\x": ([file_entry("sub\\x.bin")], ("backslash",)),
        })

    def test_empty_and_dot_components(self):
        self.check_entries({
            "a//b": ([file_entry("sub//b.bin")], ("empty path component",)),
            "./a": ([file_entry("./a.bin")], ("./a.bin",)),
            "a/./b": ([file_entry("sub/./b.bin")], ("sub/./b.bin",)),
            "trailing /": ([file_entry("sub/")], ("empty path component",)),
            "empty": ([file_entry("")], ("empty path",)),
            ".": ([file_entry(".")], ("'.'",)),
        })

    def test_nul_and_control_bytes(self):
        self.check_entries({
            "NUL": ([file_entry("a\u0000b.bin")], ("control character", "\\x00")),
            "newline": ([file_entry("a\nb.bin")], ("control character",)),
            "escape sequence": ([file_entry("a\u001b[31mred.bin")], ("control character",)),
            "DEL": ([file_entry("a\u007f.bin")], ("control character",)),
            "carriage return": ([file_entry("config.json\r")], ("control character",)),
        })

    def test_overlong_component(self):
        self.check_entries({
            "300-byte component": ([file_entry("x" * 300 + ".bin")], ("longer than 255",)),
            "300-byte folder": ([file_entry("d" * 300 + "/x.bin")], ("longer than 255",)),
        })

    def test_duplicate_paths(self):
        config = next(e for e in self.real_entries if e["path"] == "config.json")
        self.check_entries({
            "identical twice": ([dict(config)], ("config.json", "twice")),
            "twice, other size": ([{**config, "size": config["size"] + 1}], ("config.json", "twice")),
        })

    def test_path_both_file_and_directory(self):
        self.check_entries({
            "a and a/b": ([file_entry("sub")], ("'sub'", "both as a file and as a directory")),
            "file above a nested file": ([file_entry("sub/deeper")], ("sub/deeper", "both")),
        })

    # -- sizes and hashes -----------------------------------------------------------------------------

    def test_bad_sizes(self):
        lfs = {"oid": LFS_OID, "pointerSize": 130}
        self.check_entries({
            "negative": ([file_entry("n.bin", size=-1)], ("n.bin", "size")),
            "string": ([file_entry("n.bin", size="10")], ("n.bin", "size")),
            "float": ([file_entry("n.bin", size=1.5)], ("n.bin", "size")),
            "null": ([file_entry("n.bin", size=None)], ("n.bin", "size")),
            "2^60": ([file_entry("n.bin", size=2 ** 60)], ("n.bin", "absurdly large")),
            "2^64 + 1": ([file_entry("n.bin", size=2 ** 64 + 1)], ("n.bin", "size")),
            "lfs.size != size": ([file_entry("n.bin", size=10, lfs={**lfs, "size": 11})], ("n.bin", "lfs.size")),
            "lfs.size string": ([file_entry("n.bin", size=10, lfs={**lfs, "size": "10"})], ("n.bin", "size")),
        })
        self.serve({"body": json.dumps(self.listing({"type": "file", "oid": GIT_OID, "path": "n.bin"}))})
        with self.subTest("missing size"):
            self.assertRefused(7, "n.bin", "size")

    def test_bad_object_ids(self):
        lfs = {"size": 10, "pointerSize": 130}
        self.check_entries({
            "oid not hex": ([file_entry("n.bin", oid="z" * 40)], ("n.bin", "oid")),
            "oid too short": ([file_entry("n.bin", oid="abc")], ("n.bin", "oid")),
            "oid is a path": ([file_entry("n.txt", oid="../../../../../../../../../../../../../x")], ("oid",)),
            "oid a number": ([file_entry("n.bin", oid=12345)], ("oid",)),
            "lfs.oid not hex": ([file_entry("n.bin", lfs={**lfs, "oid": "g" * 64})], ("lfs.oid",)),
            "lfs.oid is a path": ([file_entry("n.bin", lfs={**lfs, "oid": "../" * 21 + "x"})], ("lfs.oid",)),
            "lfs not an object": ([file_entry("n.bin", lfs="yes")], ("lfs",)),
        })

    # -- bodies -----------------------------------------------------------------------------------------

    def test_malformed_json(self):
        real = json.dumps(self.real_entries)
        cases = {
            "unclosed": "[{", "not json": "<html>502 Bad Gateway</html>", "empty body": "",
            "an object": json.dumps({"error": "nope"}), "null": "null", "numbers": "[1, 2, 3]",
            "no path": json.dumps([{"type": "file", "oid": GIT_OID, "size": 1}]),
            "path not a string": json.dumps([file_entry(5)]),
            "no type": json.dumps([{"path": "a", "oid": GIT_OID, "size": 1}]),
            "truncated (Content-Length matches)": real[: len(real) // 2],
            "trailing garbage": real + "]]",
            "raw control byte in a string": json.dumps(self.listing(file_entry("tab\there.bin"))).replace("\\t", "\t"),
            "invalid UTF-8": None,
            "deep nesting (100k)": "[" * 100_000 + "]" * 100_000,
        }
        for name, body in cases.items():
            with self.subTest(name):
                if body is None:
                    self.serve({"body_b64": __import__("base64").b64encode(
                        b'[{"type":"file","oid":"' + GIT_OID.encode() + b'","size":1,"path":"\xff\xfe.bin"}]').decode()})
                else:
                    self.serve({"body": body})
                self.assertRefused(7, "tree listing", modes=("local",))

    def test_truncated_transfer_is_retried_then_exit_7(self):
        body = json.dumps(self.real_entries)
        self.serve({"body": body, "close_after": len(body) // 2})
        results = self.assertRefused(7, "cannot reach the hub", modes=("local",))
        tree_requests = [r for r in self.hub.hub_requests() if "/tree/" in r["path"]]
        self.assertLessEqual(len(tree_requests), 3, "--retries 2: at most 3 attempts")
        self.assertLess(results[0].elapsed, 30)

    def test_huge_body_is_refused_with_bounded_memory(self):
        unit = json.dumps(file_entry("a.bin")) + ","
        count = 100 * MIB // len(unit)     # 100 MiB
        self.serve({"repeat": {"prefix": "[", "unit": unit, "count": count, "suffix": json.dumps(file_entry("b"))+"]"}})
        self.assertRefused(7, "larger than", modes=("local",))

    def test_body_just_under_the_size_cap_parses_in_bounded_memory(self):
        # Bodies whose parse tree would be 10x their size (entries, numbers, nested brackets): parsed entry by
        # entry, refused cheaply.
        size = 60 * 1000 * 1000
        entry = json.dumps(file_entry("a.bin")) + ","
        cases = {
            "60 MB of file entries": {"prefix": "[", "unit": entry, "count": size // len(entry), "suffix": "{}]"},
            "60 MB of numbers": {"prefix": "[", "unit": "1,", "count": size // 2, "suffix": "1]"},
            "10 M nested arrays": {"prefix": "", "unit": "[", "count": 10_000_000, "suffix": ""},
        }
        for name, repeat in cases.items():
            with self.subTest(name):
                self.serve({"repeat": repeat})
                result, target, _ = self.run_contained(mode="local")
                self.assertOneClearError(result, 7)
                self.assertOnlyBookkeeping(target)

    # -- pagination -------------------------------------------------------------------------------------

    def test_next_link_back_to_the_first_page(self):
        half = len(self.real_entries) // 2
        self.serve({"body": json.dumps(self.real_entries[:half]), "next": 1},
                   {"body": json.dumps(self.real_entries[half:]), "next": "first"})
        results = self.assertRefused(7, "loop")
        for result in results:
            self.assertLess(result.elapsed, 30)
        tree_requests = [r for r in self.hub.hub_requests() if "/tree/" in r["path"]]
        self.assertLessEqual(len(tree_requests), 2 * 3, "each run reads each page once, then stops")

    def test_next_link_to_itself(self):
        self.serve({"body": json.dumps(self.real_entries), "next": "first"})
        self.assertRefused(7, "loop", modes=("local",))

    def test_pages_that_cycle_through_other_urls(self):
        # page 0 (hfget's own URL) → 1 → 2 → 1 → …: the loop is caught when page 1's URL comes back.
        self.serve({"body": "[]", "next": 1}, {"body": "[]", "next": 2}, {"body": "[]", "next": 1})
        self.assertRefused(7, "loop", modes=("local",))

    def test_next_link_to_another_host(self):
        listener = Listener("127.0.0.2")
        self.addCleanup(listener.stop)
        for name, link in {"other IP": f"http://127.0.0.2:{listener.port}/api/models/{REPO}/tree/x",
                           "file URL": "file:///etc/passwd",
                           "ftp URL": f"ftp://127.0.0.2:{listener.port}/tree"}.items():
            with self.subTest(name):
                self.serve({"body": json.dumps(self.real_entries), "next": link})
                self.assertRefused(7, "next page", modes=("local",))
        time.sleep(0.3)
        self.assertEqual(listener.accepted, 0, "no request may reach the other host")

    # -- symlinks placed in the target --------------------------------------------------------------------

    def test_symlinked_folder_in_target_gets_nothing_written_through_it(self):
        def prepare(target: Path, parent: Path) -> None:
            target.mkdir()
            (parent / "elsewhere").mkdir()
            (target / "sub").symlink_to(parent / "elsewhere")
        result, target, parent = self.run_contained(mode="local", prepare=prepare)
        self.assertOneClearError(result, 1, "sub", "symlink")
        self.assertEqual(all_paths(parent / "elsewhere"), [], "nothing may be written through the symlink")
        self.assertTrue((target / "sub").is_symlink(), "the user's symlink is left alone")

    def test_symlinked_nested_folder_in_target_gets_nothing_written_through_it(self):
        def prepare(target: Path, parent: Path) -> None:
            (target / "sub").mkdir(parents=True)
            (parent / "elsewhere").mkdir()
            (target / "sub" / "deeper").symlink_to(parent / "elsewhere")
        result, target, parent = self.run_contained(mode="local", prepare=prepare)
        self.assertOneClearError(result, 1, "sub/deeper", "symlink")
        self.assertEqual(all_paths(parent / "elsewhere"), [])

    def test_symlinked_folder_in_a_cache_snapshot_gets_nothing_written_through_it(self):
        def prepare(target: Path, parent: Path) -> None:
            snapshot = target / repo_folder_name(REPO) / "snapshots" / self.commit
            snapshot.mkdir(parents=True)
            (parent / "elsewhere").mkdir()
            (snapshot / "sub").symlink_to(parent / "elsewhere")
        result, target, parent = self.run_contained(mode="cache", prepare=prepare)
        self.assertOneClearError(result, 1, "sub", "symlink")
        self.assertEqual(all_paths(parent / "elsewhere"), [])

    def test_symlinked_folder_is_refused_before_anything_is_written(self):
        # A folder that is a symlink placed in the target is refused before any file is downloaded.
        def prepare(target: Path, parent: Path) -> None:
            target.mkdir()
            (parent / "elsewhere").mkdir()
            (target / "sub").symlink_to(parent / "elsewhere")
        result, target, parent = self.run_contained(mode="local", prepare=prepare)
        self.assertNotEqual(result.code, 0)
        self.assertOnlyBookkeeping(target, user_files=["sub"])
        self.assertEqual([r for r in self.hub.requests() if r["listener"] == "cdn" or "/resolve/" in r["path"]], [],
                         "no file body is fetched for a download that is refused")

    def test_symlinked_file_in_target_is_replaced_not_written_through(self):
        def prepare(target: Path, parent: Path) -> None:
            (target / "sub").mkdir(parents=True)
            (parent / "elsewhere").mkdir()
            (parent / "elsewhere" / "x.bin").write_text("the victim's file")
            (target / "sub" / "x.bin").symlink_to(parent / "elsewhere" / "x.bin")
        result, target, parent = self.run_contained(mode="local", prepare=prepare)
        self.assertSucceeded(result)
        self.assertEqual((parent / "elsewhere" / "x.bin").read_text(), "the victim's file")
        self.assertFalse((target / "sub" / "x.bin").is_symlink())
        self.assertLocalDir(target, self.commit, self.source)

    def test_symlinked_metadata_folder_gets_nothing_written_through_it(self):
        # .cache, .cache/huggingface (local dir), the repo folder or its hfget/ (cache) as a symlink: refused,
        # and not even state.json or download.lock is written through it.
        cases = {
            "local .cache": ("local", ".cache"),
            "local .cache/huggingface": ("local", ".cache/huggingface"),
            "cache repo folder": ("cache", repo_folder_name(REPO)),
            "cache hfget folder": ("cache", f"{repo_folder_name(REPO)}/hfget"),
        }
        for name, (mode, link) in cases.items():
            with self.subTest(name):
                def prepare(target: Path, parent: Path, link=link) -> None:
                    (target / link).parent.mkdir(parents=True, exist_ok=True)
                    (parent / "elsewhere").mkdir()
                    (target / link).symlink_to(parent / "elsewhere")
                result, target, parent = self.run_contained(mode=mode, prepare=prepare)
                self.assertOneClearError(result, 1, "symlink")
                self.assertEqual(all_paths(parent / "elsewhere"), [], "written through the symlink")

    def test_symlinked_target_root_is_the_users_choice(self):
        # The target itself (or the cache root) may be a symlink to a bigger disk: that one is followed.
        for mode in ("local", "cache"):
            with self.subTest(mode=mode):
                def prepare(target: Path, parent: Path) -> None:
                    (parent / "bigdisk").mkdir()
                    target.symlink_to(parent / "bigdisk")
                parent = self.hub.new_dir("case")
                target = parent / "target"
                prepare(target, parent)
                where = ["--local-dir", target] if mode == "local" else ["--cache-dir", target]
                result = self.hub.run_hfget(["download", REPO, *where, "--token", TOKEN], timeout=RUN_TIMEOUT)
                self.assertSucceeded(result)
                if mode == "local":
                    self.assertLocalDir(parent / "bigdisk", self.commit, self.source)
                else:
                    self.assertCacheSnapshot(parent / "bigdisk", REPO, self.commit, self.source)


# ----------------------------------------------------------------------------------------------- bodies

class HostileBodyTest(HostileTestCase):
    """The emulator's built-in CDN serves the LFS bodies with hostile framing."""

    def setUp(self):
        super().setUp()
        self.injected_before = self.hub.stats()["faults_injected"]

    def injected(self, kind: str) -> int:
        return self.hub.stats()["faults_injected"][kind] - self.injected_before[kind]

    def body_requests(self, path: str) -> list[dict]:
        return [r for r in self.hub.requests() if r["file"] == path and r["method"] == "GET"
                and (r["listener"] == "cdn" or not self.files[path].lfs)]

    def test_more_bytes_than_listed_stop_at_the_listed_size(self):
        for path in (SHARD, "config.json"):
            with self.subTest(path):
                self.hub.set_faults([{"path": path, "kind": "extra", "extra_bytes": 64 * KIB, "times": -1}])
                result, cache, _ = self.run_contained(mode="cache")
                self.assertSucceeded(result)
                self.assertCacheSnapshot(cache, REPO, self.commit, self.source)
        self.assertGreaterEqual(self.injected("extra"), 2)

    def test_fewer_bytes_with_a_clean_close_exit_7_and_keep_the_partial(self):
        kept = 300 * KIB
        self.hub.set_faults([{"path": SHARD, "kind": "short", "after_bytes": kept, "times": 1},
                             {"path": SHARD, "kind": "short", "after_bytes": 0, "times": -1}])
        result, cache, _ = self.run_contained(mode="cache", token=True)
        self.assertOneClearError(result, 7, SHARD, "ended at byte")
        self.assertNothingPublished(cache, SHARD)
        partials = [p for p in files_under(cache) if p.endswith(".hfget-partial")]
        self.assertEqual(len(partials), 1, f"the partial file is kept: {files_under(cache)}")
        self.assertGreaterEqual(self.injected("short"), 2)
        self.assertLessEqual(len([r for r in self.body_requests(SHARD) if r["fault"] == "short"]), 4,
                             "--retries 2 bounds the attempts without progress")
        # The next run resumes from the kept bytes.
        self.hub.clear_faults()
        self.hub.reset_logs()
        again = self.hub.run_hfget(["download", REPO, "--cache-dir", cache, "--token", TOKEN])
        self.assertSucceeded(again)
        self.assertCacheSnapshot(cache, REPO, self.commit, self.source)
        first = [r for r in self.body_requests(SHARD) if r["status"] in (200, 206)]
        self.assertTrue(first and all(not (r["range"] or "").startswith("bytes=0-") for r in first),
                        f"resumed from byte {kept}, not from 0: {[r['range'] for r in first]}")

    def test_short_bodies_that_keep_progressing_complete(self):
        self.hub.set_faults([{"path": SHARD, "kind": "short", "after_bytes": 200 * KIB, "times": -1}])
        result, cache, _ = self.run_contained(mode="cache")
        self.assertSucceeded(result)
        self.assertCacheSnapshot(cache, REPO, self.commit, self.source)
        self.assertGreaterEqual(self.injected("short"), 4)

    def test_content_range_that_does_not_match_the_request(self):
        cases = {"starts one byte later": {"shift": 1}, "starts one byte earlier": {"shift": -1},
                 "wrong complete length": {"shift": 0, "total_delta": 1}}
        # --chunk-size so that ranges start past 0 too (a shift of -1 at byte 0 is clipped to 0).
        for name, fields in cases.items():
            with self.subTest(name, persistent=True):
                self.hub.set_faults([{"path": SHARD, "kind": "bad_range", "times": -1, **fields}])
                result, cache, _ = self.run_contained("--chunk-size", "256KiB", mode="cache")
                self.assertOneClearError(result, 7, SHARD, "Content-Range")
                self.assertNothingPublished(cache, SHARD)
            with self.subTest(name, persistent=False):
                self.hub.set_faults([{"path": SHARD, "kind": "bad_range", "times": 1, **fields}])
                result, cache, _ = self.run_contained("--chunk-size", "256KiB", mode="cache")
                self.assertSucceeded(result)
                self.assertCacheSnapshot(cache, REPO, self.commit, self.source)

    def test_whole_file_200_for_a_range_past_zero(self):
        with self.subTest("every time"):
            self.hub.set_faults([{"path": SHARD, "kind": "ignore_range", "times": -1}])
            result, cache, _ = self.run_contained("--chunk-size", "256KiB", mode="cache")
            self.assertOneClearError(result, 7, SHARD, "ignored the Range")
            self.assertNothingPublished(cache, SHARD)
        with self.subTest("once"):
            self.hub.set_faults([{"path": SHARD, "kind": "ignore_range", "times": 1}])
            result, cache, _ = self.run_contained("--chunk-size", "256KiB", mode="cache")
            self.assertSucceeded(result)
            self.assertCacheSnapshot(cache, REPO, self.commit, self.source)
        self.assertGreaterEqual(self.injected("ignore_range"), 2)


# ---------------------------------------------------------------------------------------------- redirects

class HostileRedirectTest(HostileTestCase):
    def hops(self) -> list[dict]:
        return [r for r in self.hub.hub_requests() if r["path"] == "/_hop"]

    def test_redirect_loop_is_refused(self):
        self.hub.set_faults([{"path": SHARD, "kind": "redirect", "target": "resolve", "times": -1,
                              "location": "{hub}/_hop?loop=a"}])
        result, cache, _ = self.run_contained(mode="cache")
        self.assertOneClearError(result, 7, SHARD, "redirects")
        self.assertLessEqual(len(self.hops()), 10, "at most 10 redirects are followed")
        self.assertLess(result.elapsed, 30)

    def test_ten_redirects_are_followed(self):
        self.hub.set_faults([{"path": SHARD, "kind": "redirect", "target": "resolve", "location": "{signed}",
                              "hops": 10, "times": -1}])
        result, cache, _ = self.run_contained(mode="cache")
        self.assertSucceeded(result)
        self.assertCacheSnapshot(cache, REPO, self.commit, self.source)

    def test_eleven_redirects_are_refused(self):
        self.hub.set_faults([{"path": SHARD, "kind": "redirect", "target": "resolve", "location": "{signed}",
                              "hops": 11, "times": -1}])
        result, cache, _ = self.run_contained(mode="cache")
        self.assertOneClearError(result, 7, SHARD, "too many redirects")
        self.assertEqual([r for r in self.hub.requests() if r["listener"] == "cdn" and r["file"] == SHARD], [],
                         "the 11th redirect's target is never requested")

    def test_redirect_to_a_file_url_is_refused(self):
        canary = self.hub.new_dir("canary") / "secret.txt"
        canary.write_text("CANARY-7f3a: this must never be read by hfget\n")
        for location in (f"file://{canary}", "file:///etc/passwd"):
            with self.subTest(location):
                self.hub.set_faults([{"path": SHARD, "kind": "redirect", "target": "resolve", "times": -1,
                                      "location": location}])
                result, cache, _ = self.run_contained(mode="cache")
                self.assertOneClearError(result, 7, SHARD, "unsupported")
                self.assertNothingPublished(cache, SHARD)
                for name in files_under(cache):
                    path = cache / name
                    if path.is_file() and not path.is_symlink():
                        self.assertNotIn(b"CANARY-7f3a", path.read_bytes(), f"{name} holds the file:// target")
                        self.assertNotIn(b"root:x:0:0", path.read_bytes(), f"{name} holds /etc/passwd")

    def test_redirect_to_other_schemes_is_refused_without_a_request(self):
        listener = Listener("127.0.0.2")
        self.addCleanup(listener.stop)
        for scheme in ("ftp", "gopher", "dict", "telnet", "ldap", "smb", "scp"):
            with self.subTest(scheme):
                self.hub.set_faults([{"path": SHARD, "kind": "redirect", "target": "resolve", "times": -1,
                                      "location": f"{scheme}://127.0.0.2:{listener.port}/x"}])
                result, cache, _ = self.run_contained(mode="cache")
                self.assertOneClearError(result, 7, SHARD, "unsupported")
        time.sleep(0.3)
        self.assertEqual(listener.accepted, 0, "no request may reach a non-http target")

    def test_api_redirect_loop_is_refused(self):
        self.hub.set_faults([{"path": "/api/*", "kind": "redirect", "target": "api", "times": -1,
                              "location": "{hub}/_hop?loop=a"}])
        result, target, _ = self.run_contained(mode="local")
        self.assertOneClearError(result, 7, "redirects")
        self.assertOnlyBookkeeping(target)
        self.assertLessEqual(len(self.hops()), 3 * 10, "at most 10 redirects per attempt, 3 attempts")

    def test_api_redirect_to_a_file_url_is_refused(self):
        listener = Listener("127.0.0.2")
        self.addCleanup(listener.stop)
        for location in ("file:///etc/passwd", f"ftp://127.0.0.2:{listener.port}/x"):
            with self.subTest(location):
                self.hub.set_faults([{"path": "/api/*", "kind": "redirect", "target": "api", "times": -1,
                                      "location": location}])
                result, target, _ = self.run_contained(mode="local")
                self.assertOneClearError(result, 7, "unsupported")
                self.assertOnlyBookkeeping(target)
        self.assertEqual(listener.accepted, 0)


# -------------------------------------------------------------------------------------------------- token

class TokenLeakTest(HostileTestCase):
    """--token reaches the Hub's host and nothing else: not the CDN, not a host a redirect points to, not the
    output (-v included), not the --log-file, not the state file, not any file hfget writes."""

    cdn = "nginx"

    def assertTokenNowhere(self, result: HfgetResult, *roots: Path) -> None:
        self.assertNotIn(TOKEN, result.stdout)
        self.assertNotIn(TOKEN, result.stderr)
        self.assertNotIn(TOKEN[3:], result.stdout + result.stderr, "not even without its prefix")
        for root in roots:
            for name in files_under(root):
                path = Path(root) / name
                if path.is_file() and not path.is_symlink():
                    self.assertNotIn(TOKEN.encode(), path.read_bytes(), f"the token is written in {path}")

    def test_token_reaches_the_hub_and_nothing_else(self):
        for verbose in ([], ["-v"]):
            for mode in ("local", "cache"):
                with self.subTest(mode=mode, verbose=bool(verbose)):
                    self.hub.reset_logs()
                    log = self.hub.new_dir("log") / "download.log"
                    result, target, _ = self.run_contained(*verbose, "--log-file", log, mode=mode)
                    self.assertSucceeded(result)
                    self.assertTokenNowhere(result, target, log.parent)
                    self.assertTrue(log.read_text().strip(), "the log file was written")
                    state_dir = (target / ".cache" / "huggingface" / "hfget" if mode == "local"
                                 else target / repo_folder_name(REPO) / "hfget")
                    state = (state_dir / "state.json").read_text()
                    self.assertNotIn(TOKEN, state)
                    hub_requests = self.hub.hub_requests()
                    self.assertTrue(hub_requests and all(r["has_authorization"] for r in hub_requests),
                                    "every Hub request carries the token")
                    cdn = self.hub.cdn_requests()
                    self.assertTrue(cdn, "LFS bodies came from nginx")
                    self.assertEqual([r for r in cdn if r["authorization"]], [], "Authorization sent to the CDN")
                    self.assertNotIn(TOKEN, self.hub.cdn_access_log_text())

    def test_token_not_in_the_detached_log(self):
        parent = self.hub.new_dir("case")
        home = self.hub.new_dir("home")
        target = parent / "target"
        launched = self.hub.run_hfget(["download", REPO, "--local-dir", target, "--token", TOKEN, "--detach", "-v"],
                                      home=home)
        self.assertSucceeded(launched)
        waited = self.hub.run_hfget(["wait", target, "--timeout", "60"], home=home, timeout=90)
        self.assertSucceeded(waited)
        self.assertTrue((target / ".cache" / "huggingface" / "hfget" / "download.log").is_file())
        self.assertTokenNowhere(launched, target, home)
        self.assertNotIn(TOKEN, waited.stdout + waited.stderr)


class TokenRedirectTest(HostileTestCase):
    """Redirects from the Hub to a third host (a collector that records headers, then redirects on)."""

    def collector(self, host: str) -> Collector:
        collector = Collector(host)
        self.addCleanup(collector.stop)
        return collector

    def assertCollectorSawNoToken(self, collector: Collector) -> None:
        self.assertTrue(collector.requests, "the redirect reached the collector")
        for request in collector.requests:
            self.assertNotIn("authorization", {k.lower() for k in request["headers"]},
                             f"Authorization sent to {collector.url}")
            self.assertNotIn(TOKEN, json.dumps(request))

    def test_file_redirect_to_a_third_host_gets_no_token(self):
        collector = self.collector("127.0.0.2")
        self.hub.set_faults([{"path": SHARD, "kind": "redirect", "target": "resolve", "times": -1,
                              "location": f"{collector.url}/collect?to={{signed_q}}"}])
        result, cache, _ = self.run_contained("-v", mode="cache")
        self.assertSucceeded(result)
        self.assertCacheSnapshot(cache, REPO, self.commit, self.source)
        self.assertCollectorSawNoToken(collector)
        self.assertEqual([r for r in self.hub.requests() if r["listener"] == "cdn" and r["has_authorization"]], [])
        self.assertNotIn(TOKEN, result.stderr)

    def test_api_redirect_to_a_third_host_gets_no_token(self):
        collector = self.collector("127.0.0.2")
        tree = f"/api/models/{REPO}/tree/*"
        # Once: the collector sends hfget back to the Hub's own tree URL (path + query kept by {hub}).
        self.hub.set_faults([{"path": tree, "kind": "redirect", "target": "api", "times": 1,
                              "location": f"{collector.url}/collect?to="
                                          f"{{hub}}/api/models/{REPO}/tree/{self.commit}%3Frecursive%3Dtrue"}])
        result, target, _ = self.run_contained(mode="local")
        self.assertSucceeded(result)
        self.assertCollectorSawNoToken(collector)

    def test_redirect_to_another_port_of_the_hub_host_gets_no_token(self):
        # The token goes to the endpoint's origin (scheme, host and port), as browsers, curl and
        # python-requests send credentials: another port of the same host is another service.
        with self.subTest("file redirect"):
            collector = self.collector("127.0.0.1")
            self.hub.set_faults([{"path": SHARD, "kind": "redirect", "target": "resolve", "times": -1,
                                  "location": f"{collector.url}/collect?to={{signed_q}}"}])
            result, cache, _ = self.run_contained(mode="cache")
            self.assertSucceeded(result)
            self.assertCollectorSawNoToken(collector)
        with self.subTest("tree listing's next page"):
            # A next page on another origin is refused outright: nothing reaches the collector at all.
            self.hub.clear_faults()
            collector = self.collector("127.0.0.1")
            self.hub.set_tree_pages(REPO, [{"body": "[]", "next": f"{collector.url}/api/models/{REPO}/tree/x"}])
            result, target, _ = self.run_contained(mode="local")
            self.assertOneClearError(result, 7)
            self.assertEqual(collector.requests, [])


if __name__ == "__main__":
    unittest.main()
