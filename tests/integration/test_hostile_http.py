"""A Hub that breaks HTTP itself, below what the emulator can fake: answers cut off in the middle of their
headers by a clean close, empty answers, a header line of a megabyte, a gzip body hfget did not ask for, a
header value with terminal escapes, a byte before each stall, a byte a second, and a server that keeps
asking to be retried later. hfget must retry what a dropped connection explains, name the real cause of
what it gives up on (with the documented exit code), never count a broken answer as a file, and stay within
bounds the user can see: --retries, --stall-timeout with --speed-limit, and --retry-max-time.

The server here is raw sockets on 127.0.0.1 (http.server would not write a broken answer): it plays the
Hub's revision, tree and resolve endpoints for one small repo, and each test swaps in a handler for the
endpoint it breaks. Every read and wait has a timeout; the server is stopped in tearDown.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import socket
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Callable

from harness import HfgetResult, run_hfget

REPO = "hostile-org/tiny"
COMMIT = "c0ffee" + "0" * 34
SOCKET_TIMEOUT = 5.0        # any one read or write of the server
HOLD_LIMIT = 30.0           # the longest a handler keeps a connection open waiting for hfget to give up
RUN_TIMEOUT = 30.0          # the longest any hfget run here may take


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Request:
    def __init__(self, method: str, target: str, headers: dict[str, str], kind: str, number: int,
                 stopping: threading.Event) -> None:
        self.method, self.target, self.headers = method, target, headers
        self.kind = kind            # "revision", "tree", "resolve" or "other"
        self.number = number        # 1 for the first request of this kind, 2 for the next...
        self.stopping = stopping    # set when the server stops: a handler that waits must stop waiting

    def range_start(self) -> int:
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("range", ""))
        return int(match.group(1)) if match else 0


Handler = Callable[[socket.socket, Request], None]


class HostileHub:
    """The Hub's API and file endpoints for REPO at COMMIT, on raw sockets. `handlers[kind]`, when set,
    answers that kind of request instead of the well-behaved default (self.answer_*)."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.handlers: dict[str, Handler] = {}
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(32)
        self._sock.settimeout(0.2)
        self.url = "http://127.0.0.1:%d" % self._sock.getsockname()[1]
        self._acceptor = threading.Thread(target=self._accept_loop, daemon=True)
        self._acceptor.start()

    def stop(self) -> None:
        self._stop.set()
        self._acceptor.join(timeout=5)
        self._sock.close()
        for thread in list(self._threads):
            thread.join(timeout=SOCKET_TIMEOUT + 1)

    def count(self, kind: str) -> int:
        with self._lock:
            return sum(1 for r in self.requests if r.kind == kind)

    # -- serving ------------------------------------------------------------------------------------------

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._sock.accept()
            except (socket.timeout, OSError):
                continue
            thread = threading.Thread(target=self._serve, args=(connection,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, connection: socket.socket) -> None:
        connection.settimeout(SOCKET_TIMEOUT)
        try:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = connection.recv(65536)
                if not chunk or len(head) > 65536:
                    return
                head += chunk
            lines = head.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            kind = ("revision" if "/revision/" in target else "tree" if "/tree/" in target
                    else "resolve" if "/resolve/" in target else "other")
            with self._lock:
                number = sum(1 for r in self.requests if r.kind == kind) + 1
                request = Request(method, target, headers, kind, number, self._stop)
                self.requests.append(request)
            handler = self.handlers.get(kind) or getattr(self, f"answer_{kind}")
            handler(connection, request)
        except OSError:
            pass    # hfget hung up first: that is what several tests make it do
        finally:
            close_cleanly(connection)

    # -- the well-behaved Hub -------------------------------------------------------------------------------

    def answer_revision(self, connection: socket.socket, request: Request) -> None:
        send_json(connection, {"id": REPO, "sha": COMMIT, "siblings": [{"rfilename": p} for p in self.files]})

    def tree_entries(self) -> list[dict]:
        return [{"type": "file", "oid": git_blob_id(data), "size": len(data), "path": path}
                for path, data in self.files.items()]

    def answer_tree(self, connection: socket.socket, request: Request) -> None:
        send_json(connection, self.tree_entries())

    def file_of(self, request: Request) -> bytes:
        return self.files[request.target.split(f"/resolve/{COMMIT}/", 1)[1]]

    def answer_resolve(self, connection: socket.socket, request: Request) -> None:
        data = self.file_of(request)
        if "range" not in request.headers:
            connection.sendall(head(200, {"Content-Length": len(data)}) + data)
            return
        start = request.range_start()
        connection.sendall(head(206, {"Content-Length": len(data) - start,
                                      "Content-Range": f"bytes {start}-{len(data) - 1}/{len(data)}"}) + data[start:])

    def answer_other(self, connection: socket.socket, request: Request) -> None:
        connection.sendall(head(404, {"Content-Length": 0}))


# -- writing answers, broken or not ----------------------------------------------------------------------------

def head(status: int, headers: dict, reason: str = "X") -> bytes:
    lines = [f"HTTP/1.1 {status} {reason}", "Connection: close", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def send_json(connection: socket.socket, value) -> None:
    body = json.dumps(value).encode()
    connection.sendall(head(200, {"Content-Type": "application/json", "Content-Length": len(body)}) + body)


def close_cleanly(connection: socket.socket) -> None:
    """FIN, not RST: shut our side, let hfget read what was sent and close its side (2 s at most), then close."""
    deadline = time.monotonic() + 2.0
    try:
        connection.shutdown(socket.SHUT_WR)
        connection.settimeout(0.2)
        while time.monotonic() < deadline:
            try:
                if not connection.recv(65536):
                    break
            except socket.timeout:
                continue
    except OSError:
        pass
    connection.close()


def hold_until_hung_up(connection: socket.socket, request: Request) -> None:
    """Send nothing more; return when hfget closes the connection, the server stops, or after HOLD_LIMIT."""
    deadline = time.monotonic() + HOLD_LIMIT
    connection.settimeout(0.2)
    while time.monotonic() < deadline and not request.stopping.is_set():
        try:
            if not connection.recv(1):
                return
        except socket.timeout:
            continue


def cut_headers(connection: socket.socket, request: Request) -> None:
    """A status line, part of a header, then a clean close: libcurl takes this for a complete, empty 200."""
    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: applica")


def partial_206(connection: socket.socket, request: Request, data: bytes, extra: dict | None = None) -> int:
    """The head of a correct 206 for the asked range; returns its first byte."""
    start = request.range_start()
    connection.sendall(head(206, {"Content-Length": len(data) - start,
                                  "Content-Range": f"bytes {start}-{len(data) - 1}/{len(data)}", **(extra or {})}))
    return start


# ------------------------------------------------------------------------------------------------------- tests

class HostileHttpTestCase(unittest.TestCase):
    maxDiff = None
    files = {"config.json": b'{"model_type": "tiny"}\n', "weights.bin": bytes(range(256)) * 256}  # 64 KiB

    def setUp(self) -> None:
        self.start_fresh()

    def start_fresh(self) -> None:
        """A new server (serving self.files) and a new target: each subtest starts from nothing."""
        self.workdir = Path(tempfile.mkdtemp(prefix="hfget-hostile-http-"))
        self.addCleanup(shutil.rmtree, self.workdir, True)
        self.hub = HostileHub(dict(self.files))
        self.addCleanup(self.hub.stop)

    def download(self, *extra: str, retries: int = 2, timeout: float = RUN_TIMEOUT) -> tuple[HfgetResult, Path]:
        target = self.workdir / "target"
        home = self.workdir / "home"
        home.mkdir(exist_ok=True)
        result = run_hfget(["download", REPO, "--local-dir", target, "--retries", retries, *extra],
                           endpoint=self.hub.url, home=home, timeout=timeout)
        return result, target

    def break_weights(self, handler: Handler) -> None:
        """`handler` answers the requests for weights.bin; config.json is served as it should be (one file
        fails, so one error line)."""
        self.hub.handlers["resolve"] = lambda c, r: (
            handler(c, r) if r.target.endswith("/weights.bin") else self.hub.answer_resolve(c, r))

    def weights_requests(self) -> list[Request]:
        return [r for r in self.hub.requests if r.target.endswith("/weights.bin")]

    def assertOneError(self, result: HfgetResult, code: int, *needles: str) -> str:
        """Exit `code` with exactly one `hfget: error:` line that names every needle."""
        self.assertEqual(result.code, code, f"expected exit {code}\n{result.describe()}")
        errors = [line for line in result.stderr.splitlines() if line.startswith("hfget: error:")]
        self.assertEqual(len(errors), 1, f"expected one error line\n{result.describe()}")
        for needle in needles:
            self.assertIn(needle.lower(), errors[0].lower(), f"the error line must name the cause\n{result.describe()}")
        return errors[0]

    def assertDownloaded(self, result: HfgetResult, target: Path) -> None:
        self.assertEqual(result.code, 0, result.describe())
        for path, data in self.files.items():
            self.assertEqual((target / path).read_bytes(), data, path)


class CutAnswerTest(HostileHttpTestCase):
    """Item 9: an answer whose headers never finished, or an empty API answer, is a dropped connection."""

    def test_api_answer_cut_in_its_headers_is_retried(self):
        for kind in ("revision", "tree"):
            with self.subTest(kind):
                self.start_fresh()
                normal = getattr(self.hub, f"answer_{kind}")
                self.hub.handlers[kind] = lambda c, r: (cut_headers if r.number <= 2 else normal)(c, r)
                result, target = self.download()
                self.assertDownloaded(result, target)
                self.assertEqual(self.hub.count(kind), 3, "two cut answers, then the good one")

    def test_api_answer_cut_in_its_headers_every_time_exit_7(self):
        self.hub.handlers["revision"] = cut_headers
        result, _ = self.download()
        line = self.assertOneError(result, 7, "middle of the headers")
        self.assertNotIn("malformed", line)
        self.assertEqual(self.hub.count("revision"), 3, "--retries 2: three attempts")

    def test_empty_api_answer_is_retried(self):
        def empty_once(connection, request):
            if request.number == 1:
                connection.sendall(head(200, {"Content-Type": "application/json", "Content-Length": 0}))
            else:
                self.hub.answer_revision(connection, request)
        self.hub.handlers["revision"] = empty_once
        result, target = self.download()
        self.assertDownloaded(result, target)
        self.assertEqual(self.hub.count("revision"), 2)

    def test_file_answer_cut_in_its_headers_is_not_a_file(self):
        # An empty file is where it showed: its "complete empty 200" had all the bytes it needed.
        self.files = {**self.files, "empty.txt": b""}
        self.start_fresh()
        self.hub.handlers["resolve"] = lambda c, r: (
            cut_headers(c, r) if r.target.endswith("/empty.txt") else self.hub.answer_resolve(c, r))
        result, target = self.download()
        self.assertOneError(result, 7, "empty.txt", "middle of the headers")
        self.assertFalse((target / "empty.txt").exists(), "a cut answer must not become the file")
        self.assertEqual(len([r for r in self.hub.requests if r.target.endswith("/empty.txt")]), 3,
                         "--retries 2: three attempts")


class NamedCauseTest(HostileHttpTestCase):
    """Item 10: what hfget gives up on is named for what it is, with the documented exit code."""

    def test_entry_not_found_from_the_api_is_a_revision_error(self):
        def entry_not_found(connection, request):
            connection.sendall(head(404, {"X-Error-Code": "EntryNotFound", "X-Error-Message": "Entry not found",
                                          "Content-Length": 0}))
        for kind in ("revision", "tree"):
            with self.subTest(kind):
                self.start_fresh()
                self.hub.handlers[kind] = entry_not_found
                result, _ = self.download()
                line = self.assertOneError(result, 5, "revision", "EntryNotFound")
                self.assertNotIn("file ''", line)

    def test_a_megabyte_header_line_is_named(self):
        def giant_header(connection, request):
            connection.sendall(b"HTTP/1.1 200 OK\r\nX-Padding: " + b"a" * (1 << 20) + b"\r\nContent-Length: 2\r\n\r\n{}")
        for kind in ("revision", "resolve"):
            with self.subTest(kind):
                self.start_fresh()
                if kind == "resolve":
                    self.break_weights(giant_header)
                else:
                    self.hub.handlers[kind] = giant_header
                result, _ = self.download()
                line = self.assertOneError(result, 7, "header line longer than 100 KiB")
                self.assertNotIn("out of memory", line.lower())

    def test_a_gzip_body_is_named(self):
        def gzipped(connection, request):
            body = gzip.compress(self.hub.file_of(request) if request.kind == "resolve"
                                 else json.dumps(self.hub.tree_entries()).encode())
            connection.sendall(head(200, {"Content-Encoding": "gzip", "Content-Length": len(body)}) + body)
        for kind in ("tree", "resolve"):
            with self.subTest(kind):
                self.start_fresh()
                if kind == "resolve":
                    self.break_weights(gzipped)
                else:
                    self.hub.handlers[kind] = gzipped
                result, target = self.download()
                self.assertOneError(result, 7, "Content-Encoding 'gzip'", "identity")
                self.assertFalse((target / "weights.bin").exists())

    def test_a_gzip_coding_behind_an_identity_line_is_named(self):
        def two_lines(connection, request):
            data = self.hub.file_of(request)
            connection.sendall(head(200, {"Content-Encoding": "gzip", "content-encoding": "identity",
                                          "Content-Length": len(data)}) + data)
        self.break_weights(two_lines)
        result, _ = self.download()
        self.assertOneError(result, 7, "Content-Encoding 'gzip, identity'")

    def test_server_header_values_in_messages_are_escaped(self):
        def hostile_range(connection, request):
            data = self.hub.file_of(request)
            connection.sendall(head(206, {"Content-Length": len(data),
                                          "Content-Range": f"bytes 1-{len(data)}/{len(data) + 1}\x1b]0;owned\x07\x9b"})
                               + data)
        self.break_weights(hostile_range)
        result, _ = self.download()
        self.assertOneError(result, 7, "Content-Range", "\\x1b]0;owned\\x07")
        self.assertNotIn("\x1b", result.stderr)
        self.assertNotIn("\x07", result.stderr)


class BoundsTest(HostileHttpTestCase):
    """Item 11: a drip or a server that never lets go ends within bounds the user set."""

    def stall_after_one_byte(self, connection, request):
        data = self.hub.file_of(request)
        start = partial_206(connection, request, data)
        connection.sendall(data[start:start + 1])
        hold_until_hung_up(connection, request)

    def test_a_byte_before_each_stall_uses_up_the_retries(self):
        self.break_weights(self.stall_after_one_byte)
        result, _ = self.download("--stall-timeout", "1", timeout=20)
        self.assertOneError(result, 7, "weights.bin", "after 3 attempts")
        self.assertEqual(len(self.weights_requests()), 3,
                         "one byte per attempt is no progress: --retries 2 gives three attempts")

    def test_a_byte_a_second_is_below_the_speed_limit(self):
        def drip(connection, request):
            data = self.hub.file_of(request)
            start = partial_206(connection, request, data)
            for offset in range(start, min(len(data), start + int(HOLD_LIMIT))):
                if request.stopping.is_set():
                    return
                connection.sendall(data[offset:offset + 1])
                time.sleep(1.0)
        self.break_weights(drip)
        result, _ = self.download("--stall-timeout", "2", retries=1, timeout=25)
        self.assertOneError(result, 7, "weights.bin", "too slow")
        self.assertLess(result.elapsed, 20)

    def test_a_transfer_above_the_speed_limit_completes(self):
        # 16 KiB/s against a limit of 8 KiB/s: a slow link above the limit is never cut, however long it takes.
        def steady(connection, request):
            data = self.hub.file_of(request)
            start = partial_206(connection, request, data)
            for offset in range(start, len(data), 1024):
                connection.sendall(data[offset:offset + 1024])
                time.sleep(1 / 16)
        self.break_weights(steady)
        result, target = self.download("--stall-timeout", "1", "--speed-limit", "8k")
        self.assertDownloaded(result, target)
        self.assertEqual(len(self.weights_requests()), 1)

    def test_retry_max_time_ends_a_file_without_progress(self):
        self.break_weights(self.stall_after_one_byte)
        result, _ = self.download("--stall-timeout", "1", "--retry-max-time", "4", retries=100, timeout=20)
        self.assertOneError(result, 7, "weights.bin", "--retry-max-time")
        self.assertLess(result.elapsed, 12)

    def test_retry_max_time_ends_an_api_request_that_is_always_retried_later(self):
        def busy(connection, request):
            connection.sendall(head(503, {"Retry-After": 1, "Content-Length": 0}))
        self.hub.handlers["revision"] = busy
        result, _ = self.download("--retry-max-time", "3", retries=100, timeout=20)
        self.assertOneError(result, 7, "503", "--retry-max-time")
        self.assertLess(result.elapsed, 10)
        self.assertLessEqual(self.hub.count("revision"), 5, "Retry-After 1 s within 3 s: a few attempts")


if __name__ == "__main__":
    unittest.main()
