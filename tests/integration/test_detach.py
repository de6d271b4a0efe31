"""Downloads that outlive the shell that started them, and the commands that watch them.

- `download --detach`: the launcher first checks the repo, the revision and the token's access (a typo
  fails at once with 3/4/5/7 and writes nothing), then prints the snapshot path on stdout and
  `hfget: downloading in the background: PID N, log PATH` on stderr (not with -q) and returns at once, and nothing it leaves behind holds the caller's stdout/stderr (or any other fd) open, which is what
  keeps `ssh host hfget download --detach ...` from hanging; the daemon has its own session, stdin /dev/null,
  stdout/stderr appended to the log, and ignores SIGHUP.
- `<state dir>/state.json`, `hfget status [--json]` (running, done, died, interrupted; exit 3 when no download
  ever ran into the target) and `hfget wait [--timeout S]` (the download's exit code; 124 on timeout; 1 when
  it died).
- SIGTERM → 143, state `interrupted`, partial files kept and resumed; one hfget per target (the second waits,
  naming the holder's PID, or exits 10 with --no-wait).

nginx's limit_rate slows the CDN: a run of SLOW lasts ~3 s with the default 8 workers and ~6 s with
--max-workers 1 (its two shards one after the other). The test process makes itself a child subreaper so
that a daemon whose launcher exited is re-parented to it, can be reaped, and is killed by PID if a test fails.
"""

from __future__ import annotations

import ctypes
import getpass
import json
import os
import pty
import re
import select
import shlex
import shutil
import signal
import subprocess
import time
import unittest
from pathlib import Path

from harness import KIB, hfget_binary, source_files, unused_port, wait_until
from support import HfgetTestCase, files_under, repo_folder_name

SLOW = "test-org/slow-model"
TINY = "test-org/tiny-model"
GATED = "gated-org/tiny-model"
RATE_PER_CONNECTION = "256k"
LAUNCH_LIMIT = 2.0     # seconds the launcher may take to return and to close the caller's pipes
LAUNCHED = re.compile(r"^hfget: downloading in the background: PID (\d+), log (.+)$")
TIMESTAMPED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (.*)$")
STATE_FIELDS = ("pid", "state", "exit_code", "repo", "revision", "commit", "target", "started_at", "updated_at",
                "files_done", "files_total", "shards_done", "shards_total", "bytes_done", "bytes_total",
                "rate_bytes_per_second", "eta_seconds", "last_error")
SSHD = "/usr/sbin/sshd"
PR_SET_CHILD_SUBREAPER = 36


def set_child_subreaper(enabled: bool) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, int(enabled), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def process_state(pid: int) -> str | None:
    """The state letter in /proc/PID/stat (R, S, D, Z, ...), None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def is_running(pid: int) -> bool:
    """Alive and not a zombie."""
    return process_state(pid) not in (None, "Z", "X")


def reap(pid: int, timeout: float = 5.0) -> None:
    """Reap a re-parented daemon once it has ended (a no-op when it is not our child)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done or time.monotonic() >= deadline:
            return
        time.sleep(0.05)


def stop_daemon(pid: int) -> None:
    """Cleanup: kill a daemon a failing test left running (only if it is an hfget), then reap it."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return
    if is_running(pid) and b"hfget" in cmdline:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    reap(pid)


def stop_and_close(running) -> None:
    """Cleanup for a background hfget: kill it if a failing test left it running, reap it, close its outputs."""
    running.ensure_stopped()
    if not running._out.closed:
        running.wait(timeout=10)


def state_dir_of_local(target: Path) -> Path:
    return Path(target) / ".cache" / "huggingface" / "hfget"


def state_dir_of_cache(cache: Path, repo_id: str) -> Path:
    return Path(cache) / repo_folder_name(repo_id) / "hfget"


def read_state(state_dir: Path) -> dict | None:
    try:
        return json.loads((state_dir / "state.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def partial_bytes(target: Path) -> int:
    """Bytes written into *.hfget-partial files (allocated blocks, so preallocation does not count)."""
    total = 0
    for name in files_under(target):
        if name.endswith(".hfget-partial"):
            try:
                stat = (Path(target) / name).stat()
            except FileNotFoundError:   # completed and renamed meanwhile
                continue
            total += min(stat.st_size, stat.st_blocks * 512)
    return total


class Launch:
    def __init__(self, code, stdout, stderr, returned_after, eof_after):
        self.code, self.stdout, self.stderr = code, stdout, stderr
        self.returned_after, self.eof_after = returned_after, eof_after
        match = LAUNCHED.match(stderr.strip())
        self.pid = int(match.group(1)) if match else None
        self.log = Path(match.group(2)) if match else None

    def describe(self) -> str:
        return (f"launcher exit {self.code} after {self.returned_after:.2f}s, pipes closed after "
                f"{self.eof_after}\n--- stdout:\n{self.stdout}\n--- stderr:\n{self.stderr}")


def catches(pid: int, signum: int) -> bool:
    """Whether process `pid` takes `signum` itself: a handler installed (/proc's SigCgt) or the signal blocked
    for a thread that waits for it (SigBlk: hfget's signal watcher)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    masks = [int(line.split()[1], 16) for line in status.splitlines() if line.startswith(("SigCgt:", "SigBlk:"))]
    return any(mask & (1 << (signum - 1)) for mask in masks)


class DetachTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.subreaper = set_child_subreaper(True)
        cls.addClassCleanup(set_child_subreaper, False)
        cls.slow = cls.make_model("slow", shards=2, shard_size=768 * KIB)
        cls.tiny = cls.make_model("tiny", shards=1, shard_size=16 * KIB, tokenizer_vocab=50)
        cls.slow_files = source_files(cls.slow)
        cls.hub = cls.start_hub({SLOW: cls.slow, TINY: cls.tiny, GATED: cls.tiny}, gated={GATED: None},
                                limit_rate=RATE_PER_CONNECTION)
        cls.slow_commit = cls.hub.commit(SLOW)

    # -- helpers ------------------------------------------------------------------------------------

    def hfget(self, args: list, home: Path, timeout: float = 60.0, **kw):
        return self.hub.run_hfget(args, home=home, timeout=timeout, **kw)

    def launch_detached(self, args: list, home: Path, env: dict | None = None, cwd=None) -> Launch:
        """Run a --detach launcher with stdout/stderr on pipes and one more inherited fd (a pipe's write end),
        as ssh gives a remote command; measure when it returns and when every pipe reaches EOF."""
        extra_read, extra_write = os.pipe()
        started = time.monotonic()
        process = subprocess.Popen([hfget_binary(), *map(str, args)], env=self.hub.hfget_env(home, env),
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   pass_fds=(extra_write,), cwd=cwd)
        os.close(extra_write)
        stdout_fd, stderr_fd = process.stdout.fileno(), process.stderr.fileno()
        names = {stdout_fd: "stdout", stderr_fd: "stderr", extra_read: "extra fd"}
        data = {fd: b"" for fd in names}
        open_fds = set(names)
        eof_after: dict[str, float] = {}
        returned_after = float("inf")
        deadline = started + 15
        try:
            while (open_fds or process.poll() is None) and time.monotonic() < deadline:
                if returned_after == float("inf") and process.poll() is not None:
                    returned_after = time.monotonic() - started
                if not open_fds:
                    time.sleep(0.02)
                    continue
                ready, _, _ = select.select(list(open_fds), [], [], 0.02)
                for fd in ready:
                    chunk = os.read(fd, 65536)
                    if chunk:
                        data[fd] += chunk
                    else:
                        open_fds.discard(fd)
                        eof_after[names[fd]] = time.monotonic() - started
            if returned_after == float("inf") and process.poll() is not None:
                returned_after = time.monotonic() - started
        finally:
            os.close(extra_read)
            process.stdout.close()
            process.stderr.close()
            if process.poll() is None:
                process.kill()
            process.wait()
        for name in names.values():
            eof_after.setdefault(name, float("inf"))
        launch = Launch(process.returncode, data[stdout_fd].decode(errors="replace"),
                        data[stderr_fd].decode(errors="replace"), returned_after, eof_after)
        if launch.pid:
            self.addCleanup(stop_daemon, launch.pid)
        return launch

    def assertLaunchedAtOnce(self, launch: Launch, path: Path | None = None) -> None:
        self.assertEqual(launch.code, 0, launch.describe())
        self.assertIsNotNone(launch.pid, f"launcher line not as documented:\n{launch.describe()}")
        self.assertEqual(len(launch.stderr.splitlines()), 1, f"stderr: the launcher line only\n{launch.describe()}")
        lines = launch.stdout.splitlines()
        self.assertEqual(len(lines), 1, f"stdout holds the path only\n{launch.describe()}")
        if path is not None:
            self.assertEqual(lines[0], str(path), launch.describe())
        self.assertLess(launch.returned_after, LAUNCH_LIMIT, f"the launcher must return at once\n{launch.describe()}")
        for name, after in launch.eof_after.items():
            self.assertLess(after, LAUNCH_LIMIT, f"{name} still open after {after}s: something kept the caller's "
                            f"pipe open (ssh would hang)\n{launch.describe()}")

    def start_slow(self, target: Path, home: Path, *extra: str, workers: int = 1):
        running = self.hub.start_hfget(["download", SLOW, "--local-dir", target, "--max-workers", str(workers),
                                        *extra], home=home)
        self.addCleanup(stop_and_close, running)
        return running

    def wait_for_running_state(self, state_dir: Path, pid: int, timeout: float = 15.0) -> dict:
        def running_state():
            state = read_state(state_dir)
            return state if state and state.get("state") == "running" and state.get("pid") == pid else None
        return wait_until(running_state, timeout, what=f"state.json to say running, pid {pid}")

    def status_json(self, target, home: Path, *extra: str, **kw) -> dict:
        result = self.hfget(["status", target, "--json", *extra], home, timeout=15, **kw)
        self.assertEqual(result.code, 0, result.describe())
        return json.loads(result.stdout)

    def assertStateFields(self, state: dict) -> None:
        missing = [k for k in STATE_FIELDS if k not in state]
        self.assertEqual(missing, [], f"status --json lacks fields: {state}")

    def assertFinalNamesComplete(self, target: Path) -> None:
        for path, f in self.slow_files.items():
            final = target / path
            if final.exists():
                self.assertEqual(final.stat().st_size, f.size, f"{path} is partial under its final name")

    # -- --detach ------------------------------------------------------------------------------------

    def test_detach_returns_at_once_and_the_download_goes_on(self):
        home = self.hub.new_dir("home")
        target = self.hub.new_dir("local")
        state_dir = state_dir_of_local(target)
        # --max-speed on top of the CDN's cap: ~10 s, so that the download still runs when the checks below
        # (each an hfget process of its own: seconds under ASan) are done.
        args = ["download", SLOW, "--local-dir", target, "--max-workers", "1", "--progress-interval", "1",
                "--max-speed", "160k", "--detach"]
        launch = self.launch_detached(args, home)
        self.assertLaunchedAtOnce(launch, target)
        pid = launch.pid
        self.assertEqual(launch.log, state_dir / "download.log", "default log: <state dir>/download.log")

        # Right after the launcher returned, status and wait know about the download (a script may call them
        # at once): starting or running, never "no download".
        seen = self.status_json(target, home)
        self.assertIn(seen["phase"], ("starting", "running"), seen)
        self.assertTrue(seen["alive"], seen)
        self.assertEqual(seen["detached_pid"], pid)

        # The daemon: its own session, no terminal, stdin /dev/null, stdout/stderr on the log, SIGHUP ignored.
        self.assertTrue(is_running(pid), "the daemon must run on after the launcher returned")
        self.assertNotEqual(os.getsid(pid), os.getsid(0), "the daemon must be in a new session")
        tty_nr = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[4])
        self.assertEqual(tty_nr, 0, "the daemon has no controlling terminal")
        self.assertEqual(os.readlink(f"/proc/{pid}/fd/0"), "/dev/null")
        self.assertEqual(os.readlink(f"/proc/{pid}/fd/1"), str(launch.log))
        self.assertEqual(os.readlink(f"/proc/{pid}/fd/2"), str(launch.log))
        os.kill(pid, signal.SIGHUP)   # what the end of an SSH session sends; it must not stop the download

        # status while it runs: running, the daemon's PID, bytes_done growing; state.json is always whole.
        self.wait_for_running_state(state_dir, pid)
        first = self.status_json(target, home)
        self.assertStateFields(first)
        self.assertEqual((first["state"], first["phase"], first["alive"], first["pid"]), ("running", "running", True, pid))
        self.assertIsNone(first["exit_code"])
        deadline = time.monotonic() + 2.5
        reads = 0
        while time.monotonic() < deadline:
            text = (state_dir / "state.json").read_text()   # rewritten atomically: never absent, never torn
            try:
                json.loads(text)
            except json.JSONDecodeError:
                self.fail(f"state.json read while being rewritten: {text!r}")
            reads += 1
            time.sleep(0.01)
        self.assertTrue(is_running(pid), "the download (~10 s) must still run; it ended early or died of SIGHUP")
        second = self.status_json(target, home)
        self.assertEqual(second["state"], "running", second)
        self.assertGreater(second["bytes_done"], first["bytes_done"], "bytes_done must grow while it runs")
        self.assertNotEqual(second["updated_at"], first["updated_at"], "the state is rewritten every 2 s")
        text = self.hfget(["status", target], home, timeout=15)
        self.assertEqual(text.code, 0)
        self.assertTrue(text.stdout.startswith(f"running: {SLOW} @ {self.slow_commit}"), text.stdout)
        self.assertIn(f"pid {pid}", text.stdout)

        log_so_far = launch.log.read_text()
        self.assertIn(f"commit {self.slow_commit}", log_so_far, "the log fills while the download runs")

        waited = self.hfget(["wait", target, "--timeout", "30"], home, timeout=40)
        self.assertEqual(waited.code, 0, waited.describe())
        reap(pid)
        self.assertFalse(is_running(pid))
        self.assertLocalDir(target, self.slow_commit, self.slow)

        done = self.status_json(target, home)
        self.assertStateFields(done)
        total = sum(f.size for f in self.slow_files.values())
        n = len(self.slow_files)
        self.assertEqual((done["state"], done["exit_code"], done["alive"], done["pid"]), ("done", 0, False, pid))
        self.assertEqual((done["repo"], done["revision"], done["commit"], done["target"]),
                         (SLOW, "main", self.slow_commit, str(target)))
        self.assertEqual((done["files_done"], done["files_total"], done["shards_done"], done["shards_total"]),
                         (n, n, 2, 2))
        self.assertEqual((done["bytes_done"], done["bytes_total"]), (total, total))
        self.assertEqual(done["last_error"], "")
        text = self.hfget(["status", target], home, timeout=15)
        self.assertTrue(text.stdout.startswith("done: "), text.stdout)
        self.assertIn("exit code 0", text.stdout)

        # The log: the progress lines (stderr) and, last, the path (stdout).
        log_lines = launch.log.read_text().splitlines()
        self.assertEqual(log_lines[-1], str(target), "the daemon's stdout (the path) goes to the log")
        texts = []
        for line in log_lines[:-1]:
            self.assertNotIn("\r", line)
            self.assertNotIn("\x1b", line)
            match = TIMESTAMPED.match(line)
            self.assertIsNotNone(match, f"log line without a UTC timestamp: {line!r}")
            texts.append(match.group(1))
        for path in self.slow_files:
            self.assertEqual(sum(t.startswith(f"done {path} (") for t in texts), 1, f"one done line for {path}")
        self.assertGreaterEqual(sum(bool(re.match(r"^\d+/\d+ shards  \d+/\d+ files", t)) for t in texts), 2,
                                "status lines every --progress-interval in the log")

        # Another detached run into the same target appends to the log.
        before = launch.log.read_text()
        again = self.launch_detached(args, home)
        self.assertLaunchedAtOnce(again)
        self.assertEqual(self.hfget(["wait", target, "--timeout", "30"], home, timeout=40).code, 0)
        reap(again.pid)
        after = again.log.read_text()
        self.assertTrue(after.startswith(before) and len(after) > len(before), "the log is appended to")

    def test_detach_from_a_terminal_survives_the_hangup(self):
        """ssh -t: the launcher runs on a terminal in its own session; the terminal goes away when it returns."""
        home = self.hub.new_dir("home")
        target = self.hub.new_dir("local")
        env = self.hub.hfget_env(home)
        argv = [hfget_binary(), "download", SLOW, "--local-dir", str(target), "--detach"]
        started = time.monotonic()
        child, master = pty.fork()
        if child == 0:   # the launcher, session leader with the terminal as its controlling terminal
            try:
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        seen = b""
        try:
            while time.monotonic() < started + 15:
                ready, _, _ = select.select([master], [], [], 0.1)
                if ready:
                    try:
                        chunk = os.read(master, 4096)
                    except OSError:   # EIO: nobody has the terminal open any more
                        break
                    if not chunk:
                        break
                    seen += chunk
        finally:
            os.close(master)   # hang up
        _, status = os.waitpid(child, 0)
        elapsed = time.monotonic() - started
        text = seen.decode(errors="replace")
        self.assertEqual(os.waitstatus_to_exitcode(status), 0, text)
        self.assertLess(elapsed, LAUNCH_LIMIT, f"the launcher on a terminal must return at once: {text!r}")
        match = re.search(r"hfget: downloading in the background: PID (\d+)", text)
        self.assertIsNotNone(match, text)
        pid = int(match.group(1))
        self.addCleanup(stop_daemon, pid)
        time.sleep(0.5)
        self.assertTrue(is_running(pid), "the daemon must survive the terminal's hangup")
        waited = self.hfget(["wait", target, "--timeout", "30"], home, timeout=40)
        self.assertEqual(waited.code, 0, waited.describe())
        self.assertLocalDir(target, self.slow_commit, self.slow)

    def test_wait_returns_the_exit_code_of_a_failed_detached_download(self):
        home = self.hub.new_dir("home")
        target = self.hub.new_dir("local")
        workdir = self.hub.new_dir("cwd")
        # A file where the repo has a folder is found only once the daemon lays the files out.
        (target / "docs").write_text("a file where the repo has a folder\n")
        launch = self.launch_detached(["download", TINY, "--local-dir", target, "--detach",
                                       "--log-file", "relative.log"], home, cwd=workdir)
        self.assertLaunchedAtOnce(launch, target)
        self.assertEqual(launch.log, workdir / "relative.log", "--log-file is made absolute before detaching")
        waited = self.hfget(["wait", target, "--timeout", "20"], home, timeout=30)
        self.assertEqual(waited.code, 11, waited.describe())
        reap(launch.pid)
        state = self.status_json(target, home)
        self.assertEqual((state["state"], state["exit_code"]), ("failed", 11), state)
        self.assertIn("in the way", state["last_error"])
        self.assertIn("in the way", launch.log.read_text(), "the error is in the daemon's log")

    def test_detach_checks_repo_revision_and_access_before_leaving(self):
        home = self.hub.new_dir("home")
        dead = f"http://127.0.0.1:{unused_port('127.0.0.1')}"
        cases = {
            "unknown repo": (["download", "test-org/no-such-model"], None, 3),
            "gated without a token": (["download", GATED], None, 4),
            "unknown revision": (["download", TINY, "--revision", "no-such-branch"], None, 5),
            "unknown commit": (["download", TINY, "--revision", "0" * 40], None, 5),
            "missing file": (["download", TINY, "no-such-file.bin"], None, 6),
            "empty selection": (["download", TINY, "--include", "*.gguf"], None, 6),
            "dead endpoint": (["download", TINY], {"HF_ENDPOINT": dead}, 7),
        }
        for name, (args, env, code) in cases.items():
            for layout in ("local", "cache"):
                with self.subTest(name, layout=layout):
                    place = self.hub.new_dir(layout) / "target"
                    where = ["--local-dir", place] if layout == "local" else ["--cache-dir", place]
                    launch = self.launch_detached([*args, *where, "--detach"], home, env=env)
                    self.assertEqual(launch.code, code, launch.describe())
                    self.assertIsNone(launch.pid, f"no daemon may start\n{launch.describe()}")
                    self.assertIn("hfget: error:", launch.stderr)
                    self.assertEqual(launch.stdout, "", launch.describe())
                    self.assertLess(launch.returned_after, LAUNCH_LIMIT, launch.describe())
                    self.assertFalse(place.exists(), f"nothing may be written: {files_under(place)}")

    def test_detach_quiet_prints_only_the_path(self):
        home = self.hub.new_dir("home")
        cache = self.hub.new_dir("cache")
        launch = self.launch_detached(["download", TINY, "--cache-dir", cache, "--detach", "-q"], home)
        self.assertEqual(launch.code, 0, launch.describe())
        self.assertEqual(launch.stderr, "", launch.describe())
        commit = self.hub.commit(TINY)
        snapshot = cache / repo_folder_name(TINY) / "snapshots" / commit
        self.assertEqual(launch.stdout, f"{snapshot}\n", launch.describe())
        waited = self.hfget(["wait", TINY, "--cache-dir", cache, "--timeout", "30"], home, timeout=40)
        self.assertEqual(waited.code, 0, waited.describe())
        self.assertTrue(snapshot.is_dir())

    def test_detach_with_one_named_file_prints_that_files_path(self):
        home = self.hub.new_dir("home")
        cache = self.hub.new_dir("cache")
        launch = self.launch_detached(["download", TINY, "config.json", "--cache-dir", cache, "--detach", "-q"], home)
        self.assertEqual(launch.code, 0, launch.describe())
        snapshot = cache / repo_folder_name(TINY) / "snapshots" / self.hub.commit(TINY)
        self.assertEqual(launch.stdout, f"{snapshot / 'config.json'}\n", "as without --detach")
        waited = self.hfget(["wait", TINY, "--cache-dir", cache, "--timeout", "30"], home, timeout=40)
        self.assertEqual(waited.code, 0, waited.describe())

    def test_detach_over_ssh_localhost(self):
        """The real thing, when an SSH server is installed: ssh returns while the download goes on."""
        ssh, keygen = shutil.which("ssh"), shutil.which("ssh-keygen")
        if not os.access(SSHD, os.X_OK) or not ssh or not keygen:
            self.skipTest(f"no SSH server ({SSHD}; openssh-server is not installed): the pipe and terminal tests "
                          "cover what ssh waits for")
        directory = self.hub.new_dir("ssh")
        os.chmod(directory, 0o700)
        for key in ("host_key", "user_key"):
            subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(directory / key)], check=True,
                           timeout=30, stdin=subprocess.DEVNULL, capture_output=True)
        shutil.copy(directory / "user_key.pub", directory / "authorized_keys")
        port = unused_port("127.0.0.1")
        config = directory / "sshd_config"
        config.write_text(f"Port {port}\nListenAddress 127.0.0.1\nHostKey {directory / 'host_key'}\n"
                          f"PidFile {directory / 'sshd.pid'}\nAuthorizedKeysFile {directory / 'authorized_keys'}\n"
                          "StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                          "PubkeyAuthentication yes\nPermitRootLogin prohibit-password\n")
        with open(directory / "sshd.log", "wb") as sshd_log:
            sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdin=subprocess.DEVNULL,
                                    stdout=sshd_log, stderr=sshd_log, start_new_session=True)

        def stop_sshd():
            try:
                os.killpg(sshd.pid, signal.SIGTERM)
                sshd.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(sshd.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                sshd.wait(timeout=5)
        self.addCleanup(stop_sshd)

        def listening():
            import socket
            if sshd.poll() is not None:
                return True
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return True
            except OSError:
                return False
        wait_until(listening, 15, what="sshd to listen")
        if sshd.poll() is not None:
            self.skipTest(f"sshd could not start here: {(directory / 'sshd.log').read_text(errors='replace')[-500:]}")

        home = self.hub.new_dir("home")
        target = self.hub.new_dir("local")
        env = self.hub.hfget_env(home)
        remote = " ".join(shlex.quote(word) for word in
                          ["env", "-i", *(f"{k}={v}" for k, v in env.items()), hfget_binary(), "download", SLOW,
                           "--local-dir", str(target), "--max-workers", "1", "--detach"])
        started = time.monotonic()
        result = subprocess.run([ssh, "-T", "-p", str(port), "-i", str(directory / "user_key"),
                                 "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "StrictHostKeyChecking=no",
                                 "-o", f"UserKnownHostsFile={directory / 'known_hosts'}", "-o", "ConnectTimeout=10",
                                 f"{getpass.getuser()}@127.0.0.1", remote],
                                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        elapsed = time.monotonic() - started
        self.assertEqual(result.returncode, 0, f"{result.stdout}\n{result.stderr}")
        match = LAUNCHED.match(result.stderr.strip())
        self.assertIsNotNone(match, result.stderr)
        self.assertEqual(result.stdout.strip(), str(target))
        pid = int(match.group(1))
        self.addCleanup(stop_daemon, pid)
        self.assertTrue(is_running(pid), f"ssh returned after {elapsed:.1f}s only once the download had ended: "
                        "something held the session's stdout/stderr open")
        waited = self.hfget(["wait", target, "--timeout", "30"], home, timeout=40)
        self.assertEqual(waited.code, 0, waited.describe())
        self.assertLocalDir(target, self.slow_commit, self.slow)

    # -- status / wait ---------------------------------------------------------------------------------

    def test_status_and_wait_find_the_target_in_every_form(self):
        home = self.hub.new_dir("home")
        cache = self.hub.new_dir("cache")
        parent = self.hub.new_dir("models")
        local = parent / "tiny"
        self.assertEqual(self.hfget(["download", TINY, "--cache-dir", cache, "-q"], home).code, 0)
        self.assertEqual(self.hfget(["download", TINY, "--local-dir", local, "-q"], home).code, 0)
        default_home = self.hub.new_dir("home")   # the default cache: $HF_HOME/hub
        self.assertEqual(self.hfget(["download", TINY, "-q"], default_home).code, 0)
        state = self.status_json(TINY, default_home)
        self.assertEqual((state["state"], state["exit_code"]), ("done", 0), "status REPO_ID with the same HF_HOME")

        forms = {
            "repo id + --cache-dir": (["status", TINY, "--json", "--cache-dir", cache], {}, None),
            "repo id + HF_HUB_CACHE": (["status", TINY, "--json"], {"HF_HUB_CACHE": cache}, None),
            "absolute local dir": (["status", local, "--json"], {}, None),
            "./relative local dir": (["status", "./tiny", "--json"], {}, parent),
        }
        for name, (args, env, cwd) in forms.items():
            result = self.hfget(args, home, timeout=15, env=env, cwd=cwd)
            self.assertEqual(result.code, 0, f"{name}: {result.describe()}")
            state = json.loads(result.stdout)
            self.assertEqual((state["state"], state["exit_code"], state["repo"]), ("done", 0, TINY), f"{name}: {state}")
            waited = self.hfget(["wait", *args[1:2], *args[3:]], home, timeout=15, env=env, cwd=cwd)
            self.assertEqual(waited.code, 0, f"wait, {name}: {waited.describe()}")
        self.assertEqual(read_state(state_dir_of_cache(cache, TINY))["target"], str(cache))

        # Nothing ever downloaded there: status and wait exit 3 at once.
        empty = self.hub.new_dir("empty")
        for args, env in ((["status", empty], {}), (["status", TINY], {}), (["status", TINY, "--json"], {}),
                          (["wait", empty, "--timeout", "30"], {}), (["wait", TINY], {"HF_HUB_CACHE": empty})):
            result = self.hfget(args, home, timeout=15, env=env)
            self.assertEqual(result.code, 3, f"{args}: {result.describe()}")
            self.assertLess(result.elapsed, 5, args)

    def start_then_kill_9(self, target: Path, home: Path):
        """A slow download killed once its state says running, and reaped: its PID is gone."""
        running = self.start_slow(target, home)
        self.wait_for_running_state(state_dir_of_local(target), running.process.pid)
        running.kill()
        killed = running.wait(timeout=10)
        self.assertEqual(killed.code, -signal.SIGKILL)
        return running

    def test_status_names_the_log_and_the_files_in_flight_and_wait_shows_progress(self):
        home = self.hub.new_dir("home")
        target = self.hub.new_dir("local")
        log = self.hub.new_dir("logs") / "download.log"
        running = self.start_slow(target, home, "--log-file", log)
        pid = running.process.pid
        self.wait_for_running_state(state_dir_of_local(target), pid)
        # wait starts at once, so that it watches most of the ~6 s run even when a loaded CI machine makes the
        # status calls below slow (it once saw only the last 2 s, too few for a line one interval in).
        waiting = self.hub.start_hfget(["wait", target, "--timeout", "30", "--progress-interval", "1"], home=home)
        self.addCleanup(stop_and_close, waiting)
        state = wait_until(lambda: (s := read_state(state_dir_of_local(target))) and s.get("in_flight") and s, 10,
                           what="the state to name a file in flight")
        self.assertGreaterEqual(state["files_in_flight"], 1, state)
        self.assertIn(state["in_flight"][0]["path"], self.slow_files, state)
        text = self.hfget(["status", target], home, timeout=15)
        self.assertEqual(text.code, 0, text.describe())
        self.assertRegex(text.stdout, r"\n  in flight: model-0000[12]-of-00002\.safetensors \d+%", text.stdout)
        self.assertIn(f"\n  log: {log}\n", text.stdout)
        self.assertEqual(self.status_json(target, home)["log"], str(log))

        # wait, on a pipe: a timestamped progress line every --progress-interval on stderr, nothing on stdout.
        waited = waiting.wait(timeout=40)
        self.assertEqual(waited.code, 0, waited.describe())
        self.assertEqual(waited.stdout, "")
        progress = [line for line in waited.stderr.splitlines()
                    if (m := TIMESTAMPED.match(line)) and m.group(1).startswith(f"waiting for PID {pid}: ")]
        self.assertGreaterEqual(len(progress), 1, waited.describe())
        self.assertRegex(progress[0], r"waiting for PID \d+: \d+/2 shards  \d+/\d+ files  ", progress[0])
        self.assertTrue(waited.stderr.rstrip().endswith("exit code 0") or "exit code 0" in waited.stderr,
                        waited.describe())
        quiet = self.hfget(["wait", target, "-q"], home, timeout=15)
        self.assertEqual((quiet.code, quiet.stdout, quiet.stderr), (0, "", ""), quiet.describe())

    def test_status_says_died_after_kill_9_and_wait_returns(self):
        home = self.hub.new_dir("home")
        target = self.hub.new_dir("local")
        running = self.start_then_kill_9(target, home)

        text = self.hfget(["status", target], home, timeout=15)
        self.assertEqual(text.code, 0, text.describe())
        self.assertIn("died", text.stdout)
        state = self.status_json(target, home)
        self.assertStateFields(state)
        self.assertEqual((state["state"], state["alive"], state["pid"]), ("died", False, running.process.pid), state)
        waited = self.hfget(["wait", target, "--timeout", "20"], home, timeout=30)
        self.assertEqual(waited.code, 1, f"wait on a dead download exits 1\n{waited.describe()}")
        self.assertLess(waited.elapsed, 3, "wait must not wait for a dead download")
        self.assertIn("died", waited.stderr)

    def test_status_says_died_when_the_killed_download_is_a_zombie(self):
        home = self.hub.new_dir("home")
        target = self.hub.new_dir("local")
        running = self.start_slow(target, home)
        pid = running.process.pid
        self.wait_for_running_state(state_dir_of_local(target), pid)
        os.kill(pid, signal.SIGKILL)   # not reaped (yet): a zombie
        wait_until(lambda: process_state(pid) == "Z", 10, what="the killed download to be a zombie")
        state = self.status_json(target, home)
        waited = self.hfget(["wait", target, "--timeout", "3"], home, timeout=15)
        self.assertEqual(state["state"], "died", state)
        self.assertEqual(waited.code, 1, waited.describe())

    def test_status_says_died_after_a_reboot_gave_the_pid_to_another_process(self):
        home = self.hub.new_dir("home")
        target = self.hub.new_dir("local")
        self.start_then_kill_9(target, home)
        # As after a reboot: the state still says running, an hour ago, and its PID now names a live process
        # that started since (here a sleep).
        newer = subprocess.Popen(["sleep", "300"])
        self.addCleanup(newer.wait)
        self.addCleanup(newer.kill)
        state_file = state_dir_of_local(target) / "state.json"
        recorded = json.loads(state_file.read_text())
        an_hour_ago = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600))
        recorded.update({"pid": newer.pid, "started_at": an_hour_ago})
        state_file.write_text(json.dumps(recorded))

        state = self.status_json(target, home)
        self.assertEqual((state["state"], state["alive"], state["pid"]), ("died", False, newer.pid), state)
        waited = self.hfget(["wait", target, "--timeout", "20"], home, timeout=30)
        self.assertEqual(waited.code, 1, f"wait on a download the reboot killed exits 1\n{waited.describe()}")
        self.assertLess(waited.elapsed, 3, "wait must not wait for another process that has the old PID")

    def test_wait_timeout_exits_124_and_the_download_goes_on(self):
        home = self.hub.new_dir("home")
        target = self.hub.new_dir("local")
        running = self.start_slow(target, home)
        self.wait_for_running_state(state_dir_of_local(target), running.process.pid)
        waited = self.hfget(["wait", target, "--timeout", "1"], home, timeout=15)
        self.assertEqual(waited.code, 124, waited.describe())
        self.assertTrue(0.9 <= waited.elapsed <= 2.5, f"wait --timeout 1 took {waited.elapsed:.2f}s")
        self.assertIsNone(running.process.poll(), "a timed-out wait must not stop the download")
        running.signal(signal.SIGTERM)
        self.assertEqual(running.wait(timeout=15).code, 143)

    # -- signals -----------------------------------------------------------------------------------------

    def test_sigterm_exits_143_state_interrupted_and_the_next_run_resumes(self):
        home = self.hub.new_dir("home")
        target = self.hub.new_dir("local")
        state_dir = state_dir_of_local(target)
        running = self.start_slow(target, home, "--progress", "json", workers=8)
        self.wait_for_running_state(state_dir, running.process.pid)
        wait_until(lambda: running.process.poll() is not None or partial_bytes(target) >= 256 * KIB, 15,
                   what="hfget to write part of the shards")
        self.assertIsNone(running.process.poll(), "the download ended before it could be interrupted")
        running.signal(signal.SIGTERM)
        interrupted = running.wait(timeout=15)
        self.assertEqual(interrupted.code, 143, interrupted.describe())
        self.assertEqual(interrupted.stdout, "")
        last = json.loads(interrupted.stderr.splitlines()[-1])
        self.assertEqual((last["event"], last["state"], last["exit_code"]), ("done", "interrupted", 143), last)

        state = read_state(state_dir)
        self.assertEqual((state["state"], state["exit_code"]), ("interrupted", 143), state)
        text = self.hfget(["status", target], home, timeout=15)
        self.assertTrue(text.stdout.startswith("interrupted: "), text.stdout)
        self.assertIn("exit code 143", text.stdout)
        waited = self.hfget(["wait", target, "--timeout", "20"], home, timeout=30)
        self.assertEqual(waited.code, 143, waited.describe())
        self.assertLess(waited.elapsed, 3)

        kept = partial_bytes(target)
        self.assertGreater(kept, 0, f"partial files must be kept: {files_under(target)}")
        self.assertFinalNamesComplete(target)

        resumed = self.hfget(["download", SLOW, "--local-dir", target], home)
        self.assertEqual(resumed.code, 0, resumed.describe())
        self.assertIn("resuming at", resumed.stderr, "the next run continues the partial files")
        self.assertLocalDir(target, self.slow_commit, self.slow)   # byte-identical to the source, no partials
        self.assertEqual(read_state(state_dir)["state"], "done")

    # -- one hfget per target ----------------------------------------------------------------------------

    def test_a_second_run_waits_for_the_first_and_both_succeed(self):
        home = self.hub.new_dir("home")
        target = self.hub.new_dir("local")
        state_dir = state_dir_of_local(target)
        first = self.start_slow(target, home, workers=8)
        self.wait_for_running_state(state_dir, first.process.pid)
        second = self.start_slow(target, home, workers=8)
        third = self.start_slow(target, home, "--progress", "json", workers=8)
        time.sleep(0.7)
        self.assertIsNone(second.process.poll(), "the second run must wait, not fail")
        self.assertIsNone(third.process.poll(), "the third run must wait, not fail")
        state = read_state(state_dir)
        self.assertEqual((state["state"], state["pid"]), ("running", first.process.pid),
                         "a queued run must not take over the state of the running one")

        results = [run.wait(timeout=40) for run in (first, second, third)]
        for result in results:
            self.assertEqual(result.code, 0, result.describe())
            self.assertEqual(result.stdout, f"{target}\n")
        waiting = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ another hfget \(PID %d\) is downloading into this "
                             r"target; waiting" % first.process.pid, re.M)
        self.assertRegex(results[1].stderr, waiting, "the waiting run names the holder's PID")
        events = [json.loads(line) for line in results[2].stderr.splitlines()]
        waits = [e for e in events if e["event"] == "waiting"]
        self.assertEqual([e.get("holder_pid") for e in waits], [first.process.pid], events[:3])
        self.assertEqual(events[-1]["event"], "done")
        self.assertEqual((events[-1]["exit_code"], events[-1]["bytes_this_run"]), (0, 0),
                         "the queued run finds everything already there")
        self.assertLocalDir(target, self.slow_commit, self.slow)   # one correct copy

    def test_no_wait_exits_10_at_once_when_the_target_is_busy(self):
        home = self.hub.new_dir("home")
        target = self.hub.new_dir("local")
        state_dir = state_dir_of_local(target)
        first = self.start_slow(target, home)
        self.wait_for_running_state(state_dir, first.process.pid)
        busy = self.hfget(["download", SLOW, "--local-dir", target, "--no-wait"], home, timeout=15)
        self.assertEqual(busy.code, 10, busy.describe())
        self.assertLess(busy.elapsed, LAUNCH_LIMIT, "--no-wait must not wait")
        self.assertIn(f"PID {first.process.pid}", busy.stderr, "the error names the holder")
        self.assertEqual(busy.stdout, "")
        state = self.status_json(target, home)
        self.assertEqual((state["state"], state["pid"], state["alive"]), ("running", first.process.pid, True),
                         "the refused run must not overwrite the running one's state")

        # A queued run stopped while it waits: 143 at once, and the running one's state stays.
        queued = self.start_slow(target, home)
        time.sleep(0.7)
        self.assertIsNone(queued.process.poll(), "without --no-wait the second run waits")
        # A SIGTERM before hfget has its handler (a slow start: ASan, a loaded machine) would kill it as the
        # default does (-15), which says nothing about how a waiting run stops.
        wait_until(lambda: catches(queued.process.pid, signal.SIGTERM), 10, what="the queued run to take SIGTERM itself")
        queued.signal(signal.SIGTERM)
        stopped = queued.wait(timeout=10)
        self.assertEqual(stopped.code, 143, stopped.describe())
        self.assertLess(stopped.elapsed, 5)
        state = read_state(state_dir)
        self.assertEqual((state["state"], state["pid"]), ("running", first.process.pid),
                         "an interrupted queued run must not overwrite the running one's state")
        self.assertIsNone(first.process.poll())
        first.signal(signal.SIGTERM)
        self.assertEqual(first.wait(timeout=15).code, 143)


    def test_detach_with_no_wait_reports_a_busy_target(self):
        home = self.hub.new_dir("home")
        target = self.hub.new_dir("local")
        first = self.start_slow(target, home)
        self.wait_for_running_state(state_dir_of_local(target), first.process.pid)
        launch = self.launch_detached(["download", SLOW, "--local-dir", target, "--detach", "--no-wait"], home)
        if launch.code != 10:
            self.assertEqual(launch.code, 0, launch.describe())
            waited = self.hfget(["wait", target, "--timeout", "2"], home, timeout=15)
            self.assertEqual(waited.code, 10, f"neither the launcher nor wait reports the busy target\n"
                             f"{launch.describe()}\n{waited.describe()}")


if __name__ == "__main__":
    unittest.main()
