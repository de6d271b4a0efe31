"""What hfget prints while it downloads, for people, log files and programs.

- stderr not a terminal: plain lines `<UTC timestamp> <text>`, a status line every --progress-interval seconds
  and one `done <path> (...)` line per finished file; no carriage return, no escape code; stdout is the path.
- stderr a terminal: a block redrawn in place; HF_HUB_DISABLE_PROGRESS_BARS=1 turns it back into plain lines.
- --progress json: one JSON object per line with `event` and `time` and the documented counters.
- --log-file: the plain lines also go to a file, with -q and with --progress json too.
- -v logs requests but never the token.

nginx's limit_rate slows the CDN so that a run lasts a few seconds and status lines have time to appear.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import termios
import threading
import time
import unittest
from datetime import datetime, timezone
from pathlib import Path

from harness import KIB, hfget_binary, source_files
from support import HfgetTestCase, files_under

SLOW = "test-org/slow-model"        # 2 shards of 768 KiB: ~3 s at 256 KiB/s per connection
TINY = "test-org/tiny-model"        # ~22 KiB: well under a second
PRIVATE = "secret-org/private-model"
TOKEN = "hf_DeployTestPrivateToken0123456789abcdef"
WRONG_TOKEN = "hf_DeployTestWrongToken9876543210fedcba"
RATE_PER_CONNECTION = "256k"

TIMESTAMPED = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) (.*)$")
# "1/2 shards  10/12 files  587.8 KiB / 1.2 MiB (46.0%)  650.2 kB/s  8 conns  ETA 1s" (shards only when there are
# some, "  12.0 MiB copied" after the rate once Xet chunks were copied from files already here, connections once
# the fetch started)
# The periodic line may add the files in flight with the most left: "  in flight: a 12%, b 40% (+1 more)".
STATUS = re.compile(r"^(\d+/\d+ shards  )?\d+/\d+ files  \S+ \S+ / \S+ \S+ \(\d+\.\d%\)  \S+ \S+(  \S+ \S+ copied)?(  \d+ conns?)?  ETA \S+"
                    r"(  in flight: \S+ \d+%(, \S+ \d+%)?( \(\+\d+ more\))?)?$")
COUNTERS = ("files_done", "files_total", "shards_done", "shards_total", "bytes_done", "bytes_total",
            "bytes_this_run", "bytes_copied_this_run", "rate_bytes_per_second", "eta_seconds")
EVENTS = {"start", "file_started", "file_done", "progress", "retry", "error", "waiting", "done", "log",
          "connections", "file_path"}
# A zone far from UTC: a timestamp written in local time would be 5.5 hours off.
NON_UTC_TZ = "XST-5:30"


def parse_timestamp(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


def run_with_line_times(args: list, env: dict, timeout: float = 60.0):
    """Run hfget with stderr on a pipe; returns (code, stdout, [(arrival monotonic, wall UTC, line)])."""
    process = subprocess.Popen([hfget_binary(), *map(str, args)], env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines: list[tuple[float, datetime, str]] = []

    def read_stderr():
        for raw in iter(process.stderr.readline, b""):
            lines.append((time.monotonic(), datetime.now(timezone.utc), raw.decode(errors="replace")))

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    stdout_box: list[bytes] = []
    out_reader = threading.Thread(target=lambda: stdout_box.append(process.stdout.read()), daemon=True)
    out_reader.start()
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError(f"hfget {' '.join(map(str, args))} did not finish within {timeout}s") from None
    reader.join(timeout=5)
    out_reader.join(timeout=5)
    process.stdout.close()
    process.stderr.close()
    return code, b"".join(stdout_box).decode(errors="replace"), lines


def run_on_terminal(args: list, env: dict, timeout: float = 60.0):
    """Run hfget with stderr on a pseudo-terminal (stdout a pipe); returns (code, stdout, terminal bytes).

    Output post-processing is turned off on the terminal so that the bytes read are the bytes hfget wrote
    (no \\n → \\r\\n translation)."""
    master, slave = pty.openpty()
    attributes = termios.tcgetattr(slave)
    attributes[1] &= ~termios.OPOST
    termios.tcsetattr(slave, termios.TCSANOW, attributes)
    try:
        process = subprocess.Popen([hfget_binary(), *map(str, args)], env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=slave)
    finally:
        os.close(slave)
    stdout_box: list[bytes] = []
    out_reader = threading.Thread(target=lambda: stdout_box.append(process.stdout.read()), daemon=True)
    out_reader.start()
    seen = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:   # EIO: every writer of the terminal is gone
                    break
                if not chunk:
                    break
                seen += chunk
        else:
            process.kill()
            raise AssertionError(f"hfget on a terminal did not finish within {timeout}s")
        code = process.wait(timeout=10)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()
    out_reader.join(timeout=5)
    process.stdout.close()
    return code, b"".join(stdout_box).decode(errors="replace"), seen


class ProgressOutputTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.slow = cls.make_model("slow", shards=2, shard_size=768 * KIB)
        cls.tiny = cls.make_model("tiny", shards=1, shard_size=16 * KIB, tokenizer_vocab=50)
        cls.slow_files = source_files(cls.slow)
        cls.tiny_files = source_files(cls.tiny)
        cls.hub = cls.start_hub({SLOW: cls.slow, TINY: cls.tiny, PRIVATE: cls.tiny}, private={PRIVATE: TOKEN},
                                limit_rate=RATE_PER_CONNECTION)

    # -- helpers ------------------------------------------------------------------------------------

    def env(self, extra: dict | None = None) -> dict:
        return self.hub.hfget_env(self.hub.new_dir("home"), {"TZ": NON_UTC_TZ, **(extra or {})})

    def assertPlainLines(self, lines: list[str], where: str) -> list[str]:
        """Every line is `<UTC timestamp> <text>`, without CR or escape codes; returns the texts."""
        texts = []
        for line in lines:
            self.assertNotIn("\r", line, f"carriage return in {where}: {line!r}")
            self.assertNotIn("\x1b", line, f"escape code in {where}: {line!r}")
            match = TIMESTAMPED.match(line.rstrip("\n"))
            self.assertIsNotNone(match, f"{where}: line without a leading UTC timestamp: {line!r}")
            texts.append(match.group(2))
        return texts

    def assertOneDoneLinePerFile(self, texts: list[str], files, where: str) -> None:
        for path in files:
            count = sum(1 for t in texts if t.startswith(f"done {path} ("))
            self.assertEqual(count, 1, f"{where}: expected one 'done {path} (...)' line, got {count}:\n"
                             + "\n".join(texts))
        done_lines = [t for t in texts if t.startswith("done ")]
        self.assertEqual(len(done_lines), len(files), f"{where}: one done line per file, no more:\n"
                         + "\n".join(done_lines))

    def assertStatusLines(self, texts: list[str], where: str, at_least: int = 2) -> list[str]:
        status = [t for t in texts if STATUS.match(t)]
        self.assertGreaterEqual(len(status), at_least, f"{where}: expected ≥{at_least} status lines:\n"
                                + "\n".join(texts))
        return status

    def json_events(self, stderr: str) -> list[dict]:
        events = []
        for line in stderr.splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                self.fail(f"stderr line is not JSON: {line!r}\n--- stderr:\n{stderr}")
            self.assertIsInstance(event, dict, f"not a JSON object: {line!r}")
            self.assertIn(event.get("event"), EVENTS, f"unknown or missing event: {line!r}")
            self.assertRegex(event.get("time", ""), r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$",
                             f"missing or non-UTC time: {line!r}")
            events.append(event)
        self.assertTrue(events, "no JSON line on stderr")
        return events

    # -- plain lines ---------------------------------------------------------------------------------

    def test_plain_lines_when_stderr_is_not_a_terminal(self):
        target = self.hub.new_dir("local")
        code, stdout, timed = run_with_line_times(
            ["download", SLOW, "--local-dir", target, "--progress-interval", "1"], self.env())
        stderr = "".join(line for _, _, line in timed)
        self.assertEqual(code, 0, stderr)
        self.assertEqual(stdout, f"{target}\n", "stdout must be exactly the path")
        self.assertLocalDir(target, self.hub.commit(SLOW), self.slow)

        texts = self.assertPlainLines([line for _, _, line in timed], "stderr")
        # The timestamp is UTC (TZ is set far from it) and the time the line was written.
        for _, wall, line in timed:
            stamp = parse_timestamp(TIMESTAMPED.match(line).group(1))
            self.assertLess(abs((stamp - wall).total_seconds()), 3, f"timestamp is not UTC now: {line!r}")
        self.assertOneDoneLinePerFile(texts, self.slow_files, "stderr")
        self.assertTrue(any(t.startswith("commit ") for t in texts), "a plan line names the commit")

        # Status lines every --progress-interval (1 s): at least two, about 1 s apart.
        status_times = [arrived for arrived, _, line in timed if STATUS.match(TIMESTAMPED.match(line).group(2))]
        self.assertGreaterEqual(len(status_times), 2, f"expected ≥2 status lines in a ~3 s run:\n{stderr}")
        gaps = [b - a for a, b in zip(status_times, status_times[1:])]
        for gap in gaps:
            self.assertTrue(0.6 <= gap <= 1.7, f"status lines should come every ~1 s, gaps {gaps}\n{stderr}")
        # A periodic line names files still in flight (the slow repo's files take seconds each).
        named = [m.group(1) for t in texts for m in [re.search(r"  in flight: (\S+) \d+%", t)] if m]
        self.assertTrue(named, f"no status line named a file in flight:\n{stderr}")
        self.assertTrue(set(named) <= set(self.slow_files), named)

    def test_plain_lines_on_a_terminal_with_hf_hub_disable_progress_bars_or_progress_lines(self):
        target = self.hub.new_dir("local")
        code, stdout, terminal = run_on_terminal(
            ["download", SLOW, "--local-dir", target, "--progress-interval", "1"],
            self.env({"HF_HUB_DISABLE_PROGRESS_BARS": "1"}))
        text = terminal.decode(errors="replace")
        self.assertEqual(code, 0, text)
        self.assertEqual(stdout, f"{target}\n")
        lines = text.splitlines(keepends=True)
        texts = self.assertPlainLines(lines, "terminal output")
        self.assertOneDoneLinePerFile(texts, self.slow_files, "terminal output")
        self.assertStatusLines(texts, "terminal output")
        self.assertLocalDir(target, self.hub.commit(SLOW), self.slow)

        # --progress lines (what a systemd unit uses) does the same on a terminal.
        target = self.hub.new_dir("local")
        code, stdout, terminal = run_on_terminal(["download", TINY, "--local-dir", target, "--progress", "lines"],
                                                 self.env())
        text = terminal.decode(errors="replace")
        self.assertEqual(code, 0, text)
        self.assertEqual(stdout, f"{target}\n")
        texts = self.assertPlainLines(text.splitlines(keepends=True), "terminal output, --progress lines")
        self.assertOneDoneLinePerFile(texts, self.tiny_files, "terminal output, --progress lines")

    def test_terminal_gets_a_block_redrawn_in_place(self):
        target = self.hub.new_dir("local")
        started = time.monotonic()
        code, stdout, terminal = run_on_terminal(["download", SLOW, "--local-dir", target], self.env())
        elapsed = time.monotonic() - started
        text = terminal.decode(errors="replace")
        self.assertEqual(code, 0, text)
        self.assertEqual(stdout, f"{target}\n", "stdout is a pipe: only the path, no progress")
        redraws = re.findall(r"\x1b\[\d+F\x1b\[J", text)
        self.assertGreaterEqual(len(redraws), 2, f"a ~3 s run redraws its block several times:\n{text!r}")
        self.assertLessEqual(len(redraws), 4 * elapsed + 2, f"at most 4 redraws a second ({elapsed:.1f}s run)")
        last_frame = re.split(r"\x1b\[\d+F\x1b\[J", text)[-1]
        n = len(self.slow_files)
        self.assertIn(f"2/2 shards  {n}/{n} files", last_frame, f"the last frame shows the end:\n{last_frame!r}")
        self.assertIn("(100.0%)", last_frame)
        self.assertLocalDir(target, self.hub.commit(SLOW), self.slow)

    def test_quiet_prints_nothing_on_stderr_on_success(self):
        target = self.hub.new_dir("local")
        result = self.hub.run_hfget(["download", TINY, "--local-dir", target, "-q"])
        self.assertSucceeded(result)
        self.assertEqual(result.stderr, "")
        self.assertEqual(result.stdout, f"{target}\n")

    # -- JSON lines ----------------------------------------------------------------------------------

    def test_json_lines(self):
        target = self.hub.new_dir("local")
        result = self.hub.run_hfget(["download", SLOW, "--local-dir", target, "--progress", "json",
                                     "--progress-interval", "1"], env={"TZ": NON_UTC_TZ})
        self.assertSucceeded(result)
        self.assertEqual(result.stdout, f"{target}\n")
        events = self.json_events(result.stderr)
        kinds = [e["event"] for e in events]
        self.assertEqual(kinds[0], "start", kinds)
        self.assertEqual(kinds[-1], "done", kinds)
        self.assertEqual(kinds.count("done"), 1)
        self.assertGreaterEqual(kinds.count("progress"), 1, f"a ~3 s run at 1 s intervals has progress events: {kinds}")
        for event in events:
            if event["event"] in ("start", "file_done", "progress", "done"):
                missing = [k for k in COUNTERS if k not in event]
                self.assertEqual(missing, [], f"{event['event']} lacks counters: {event}")
                self.assertLessEqual(event["bytes_done"], event["bytes_total"], event)
                self.assertLessEqual(event["files_done"], event["files_total"], event)
            if event["event"] in ("file_started", "file_done"):
                self.assertIn("path", event)
                self.assertIn("size", event)
        now = datetime.now(timezone.utc)
        self.assertLess(abs((parse_timestamp(events[-1]["time"][:19] + "Z") - now).total_seconds()), 5,
                        "time is UTC")
        self.assertIsInstance(events[0].get("commit"), str)

        counted = [e for e in events if "files_done" in e]
        self.assertEqual([e["files_done"] for e in counted], sorted(e["files_done"] for e in counted),
                         "files_done never goes back")
        done_paths = [e["path"] for e in events if e["event"] == "file_done"]
        self.assertEqual(sorted(done_paths), sorted(self.slow_files), "one file_done per file")
        for e in events:
            if e["event"] == "file_done":
                self.assertEqual(e["size"], self.slow_files[e["path"]].size)
        total = sum(f.size for f in self.slow_files.values())
        done = events[-1]
        self.assertEqual(done["exit_code"], 0)
        self.assertEqual(done["state"], "done")
        self.assertEqual(done["path"], str(target))
        self.assertNotIn("error", done)
        self.assertEqual((done["files_done"], done["files_total"]), (len(self.slow_files),) * 2)
        self.assertEqual((done["shards_done"], done["shards_total"]), (2, 2))
        self.assertEqual((done["bytes_done"], done["bytes_total"], done["bytes_this_run"]), (total,) * 3)
        self.assertLocalDir(target, self.hub.commit(SLOW), self.slow)

    def test_json_lines_of_a_failed_run_end_with_done_and_the_exit_code(self):
        result = self.hub.run_hfget(["download", TINY, "--local-dir", self.hub.new_dir("local"),
                                     "--revision", "no-such-branch", "--progress", "json"])
        self.assertExit(result, 5)
        self.assertEqual(result.stdout, "")
        events = self.json_events(result.stderr)
        done = events[-1]
        self.assertEqual(done["event"], "done", events)
        self.assertEqual(done["exit_code"], 5)
        self.assertEqual(done["state"], "failed")
        self.assertIsInstance(done.get("error"), str)
        self.assertIn("no-such-branch", done["error"])
        self.assertFalse(done.get("path"), "a failed run has no snapshot path")

    def test_retries_are_reported_as_lines_and_as_json_events(self):
        self.addCleanup(self.hub.clear_faults)
        outputs = {}
        for mode in ("lines", "json"):
            self.hub.set_faults([{"path": "config.json", "kind": "status", "status": 503}])
            result = self.hub.run_hfget(["download", TINY, "--local-dir", self.hub.new_dir("local"),
                                         "--progress", mode])
            self.assertSucceeded(result)
            outputs[mode] = result.stderr
        texts = self.assertPlainLines(outputs["lines"].splitlines(keepends=True), "stderr")
        self.assertTrue(any(re.match(r"^config\.json: HTTP 503; retry 1 in \d+\.\ds$", t) for t in texts),
                        f"a retry line names the file, the cause and the delay:\n{outputs['lines']}")
        retries = [e for e in self.json_events(outputs["json"]) if e["event"] == "retry"]
        self.assertEqual(len(retries), 1, outputs["json"])
        self.assertEqual((retries[0]["path"], retries[0]["attempt"]), ("config.json", 1))
        self.assertIn("503", retries[0]["reason"])
        self.assertIsInstance(retries[0]["delay_seconds"], (int, float))

    def test_json_lines_stay_json_when_a_corrupt_file_is_fetched_again(self):
        self.addCleanup(self.hub.clear_faults)
        self.hub.set_faults([{"path": "config.json", "kind": "flip", "offset": 3}])
        result = self.hub.run_hfget(["download", TINY, "--local-dir", self.hub.new_dir("local"),
                                     "--progress", "json"])
        self.assertSucceeded(result)
        events = self.json_events(result.stderr)
        self.assertEqual((events[-1]["event"], events[-1]["exit_code"]), ("done", 0))

    # -- --log-file ------------------------------------------------------------------------------

    def test_log_file_gets_plain_lines_with_quiet(self):
        target = self.hub.new_dir("local")
        log = self.hub.new_dir("logs") / "download.log"
        result = self.hub.run_hfget(["download", SLOW, "--local-dir", target, "-q", "--log-file", log,
                                     "--progress-interval", "1"], env={"TZ": NON_UTC_TZ})
        self.assertSucceeded(result)
        self.assertEqual(result.stderr, "", "-q: nothing on stderr on success")
        self.assertEqual(result.stdout, f"{target}\n")
        texts = self.assertPlainLines(log.read_text().splitlines(keepends=True), "log file")
        self.assertOneDoneLinePerFile(texts, self.slow_files, "log file")
        self.assertStatusLines(texts, "log file")
        self.assertTrue(any(t.startswith("commit ") for t in texts), texts)
        self.assertTrue(any(t.startswith("finished: ") for t in texts), texts)
        stamp = parse_timestamp(TIMESTAMPED.match(log.read_text().splitlines()[-1]).group(1))
        self.assertLess(abs((stamp - datetime.now(timezone.utc)).total_seconds()), 10, "log timestamps are UTC")

    def test_log_file_gets_plain_lines_with_json_progress_and_is_appended_to(self):
        log = self.hub.new_dir("logs") / "download.log"
        target = self.hub.new_dir("local")
        result = self.hub.run_hfget(["download", TINY, "--local-dir", target, "--progress", "json",
                                     "--log-file", log])
        self.assertSucceeded(result)
        self.json_events(result.stderr)   # stderr stays pure JSON
        first = log.read_text()
        texts = self.assertPlainLines(first.splitlines(keepends=True), "log file")
        self.assertOneDoneLinePerFile(texts, self.tiny_files, "log file")
        self.assertTrue(any(t.startswith("finished: ") for t in texts), texts)

        # A second run (everything already there) appends; the first run's lines stay.
        again = self.hub.run_hfget(["download", TINY, "--local-dir", target, "-q", "--log-file", log])
        self.assertSucceeded(again)
        second = log.read_text()
        self.assertTrue(second.startswith(first) and len(second) > len(first), "the log file is appended to")
        self.assertPlainLines(second.splitlines(keepends=True), "log file")

    def test_log_file_records_a_failure(self):
        log = self.hub.new_dir("logs") / "download.log"
        result = self.hub.run_hfget(["download", TINY, "--local-dir", self.hub.new_dir("local"), "-q",
                                     "--revision", "no-such-branch", "--log-file", log])
        self.assertExit(result, 5)
        self.assertIn("hfget: error:", result.stderr, "-q still prints the error")
        texts = self.assertPlainLines(log.read_text().splitlines(keepends=True), "log file")
        self.assertTrue(any("exit code 5" in t and "no-such-branch" in t for t in texts),
                        f"the log file names the failure and its exit code:\n{texts}")

    def test_log_file_also_gets_the_summary_and_check_lines(self):
        log = self.hub.new_dir("logs") / "download.log"
        result = self.hub.run_hfget(["download", TINY, "--local-dir", self.hub.new_dir("local"),
                                     "--log-file", log])
        self.assertSucceeded(result)
        stderr_texts = self.assertPlainLines(result.stderr.splitlines(keepends=True), "stderr")
        log_texts = self.assertPlainLines(log.read_text().splitlines(keepends=True), "log file")
        summary = [t for t in stderr_texts if t.startswith(("fetched ", "checks passed", "warning: "))]
        self.assertTrue(summary, f"stderr has the summary lines:\n{result.stderr}")
        fetched = [t for t in summary if t.startswith("fetched ")]
        self.assertEqual(len(fetched), 1, result.stderr)
        self.assertRegex(fetched[0], r" downloaded \(.+\) in \d+\.\ds at [\d.]+ [kMG]?B/s, \d+ already complete$",
                         "the closing line gives the run's average rate")
        for line in summary:
            self.assertIn(line, log_texts, "a summary line on stderr is missing from --log-file")

    # -- the token ---------------------------------------------------------------------------------

    def assertNoToken(self, text: str, where: str, *tokens: str) -> None:
        for token in tokens:
            self.assertNotIn(token, text, f"the token appears in {where}")
        self.assertNotIn("Bearer", text, f"an Authorization header appears in {where}")

    def test_verbose_never_prints_the_token(self):
        logs = self.hub.new_dir("logs")
        target = self.hub.new_dir("local")
        runs = {
            "HF_TOKEN, lines": (["download", PRIVATE, "--local-dir", target, "-v", "--log-file",
                                 logs / "a.log"], {"HF_TOKEN": TOKEN}),
            "--token, json": (["download", PRIVATE, "--cache-dir", self.hub.new_dir("cache"), "-v",
                               "--progress", "json", "--token", TOKEN, "--log-file", logs / "b.log"], {}),
        }
        for name, (args, env) in runs.items():
            result = self.hub.run_hfget(args, env=env)
            self.assertSucceeded(result)
            self.assertIn("GET ", result.stderr, f"{name}: -v logs the requests (else this test proves nothing)")
            self.assertNoToken(result.stdout, f"{name}: stdout", TOKEN)
            self.assertNoToken(result.stderr, f"{name}: stderr", TOKEN)
        for log in sorted(logs.iterdir()):
            text = log.read_text()
            self.assertIn("GET ", text, f"{log.name}: -v logs the requests into the log file too")
            self.assertNoToken(text, log.name, TOKEN)
        for name in files_under(target / ".cache" / "huggingface"):
            self.assertNoToken((target / ".cache" / "huggingface" / name).read_text(errors="replace"),
                               name, TOKEN)

        # A rejected token is not printed either.
        rejected = self.hub.run_hfget(["download", PRIVATE, "--local-dir", self.hub.new_dir("local"), "-v",
                                       "--log-file", logs / "c.log"], env={"HF_TOKEN": WRONG_TOKEN})
        self.assertNotEqual(rejected.code, 0)
        for where, text in (("stdout", rejected.stdout), ("stderr", rejected.stderr),
                            ("log", (logs / "c.log").read_text())):
            self.assertNoToken(text, f"rejected run: {where}", WRONG_TOKEN, TOKEN)


if __name__ == "__main__":
    unittest.main()
