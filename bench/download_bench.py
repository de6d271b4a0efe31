#!/usr/bin/env python3
"""Benchmark `hfget download` against aria2c, curl and the @huggingface/hub JS client, on loopback.

    python3 bench/download_bench.py [--size 2GiB] [--shards 64] [--rate-cap 8m,40m] [--repeat 3]
                                    [--hfget build/hfget] [--tools hfget,hfget-c32,aria2c,curl,curl-p8,hub-js]
                                    [--scenarios unlimited,capped] [--variant NAME=FLAGS] [--json-out FILE]
                                    [--hfget-baseline OTHER/hfget] [--connection-sweep 16,32,64,128]
                                    [--max-speed-rates 10M,100M,1G] [--work /dev/shm/bench]

It writes a synthetic sharded model (tests/fixtures/make_model.py), serves it with the bundled Hub emulator +
nginx as the CDN (tests/integration/harness.py) on 127.0.0.1/127.0.0.2, and downloads the whole repo with
each tool into a fresh directory, checking afterwards that every file is there with the source's size and
SHA-256. Scenarios, each with its own pair of servers:

  unlimited     plain loopback: measures CPU cost and connection strategy, not a network;
  capped-RATE   nginx `limit_rate` per connection, one scenario per --rate-cap value (default 8m,40m = 8 and
                40 MiB/s; `--scenarios capped` means all of them), standing in for the per-flow limit of a CDN
                edge or a long WAN path: here the number of busy connections matters.

Tools (one at a time, each into a fresh directory):
  hfget      hfget download ORG/NAME --local-dir D --progress json   (default flags)
  hfget-c32  the same with --connections 32
  aria2c     aria2c -x16 -s16 -j8 --input-file LIST  (LIST: each file's /resolve/main/ URL with dir=/out=)
  curl       curl -sSfL --create-dirs -o OUT URL, one file at a time (xargs -P1)
  curl-p8    the same, 8 at a time (xargs -P8)
  curl-p16   the same, 16 at a time (issue 17's "curl x16"; not in the default --tools)
  hf, hf-w16 `hf download ORG/NAME --local-dir D --max-workers 8|16` (huggingface_hub), HF_ENDPOINT at the
             emulator, hf_transfer off (not in the default --tools; skipped when `hf` is not on PATH)
  hub-js     @huggingface/hub snapshotDownload() under node (bench/hub_js_download.mjs; needs
             `npm install --prefix bench`; skipped with a message when node or the package is missing)
  --variant NAME=FLAGS adds hfget-NAME: hfget with extra flags (e.g. c8="--chunk-size 8MiB").
  --hfget-baseline PATH adds hfget-baseline: another hfget binary (a build of an older commit) with the default
             flags, in the same run and round-robin with the others, so both see the same machine; a comparison
             line per scenario gives the median walls, their ratio and whether the Hub and CDN request counts
             (and, unlimited, the no-op re-run's requests) are the same.
  --connection-sweep N,N adds hfget-cN: hfget with a fixed --connections N, beside the default flags (the
             connection controller). Under each table: default vs the best fixed row and vs curl-p16, and issue
             17's targets for that scenario with PASS/MISS and the margin.
  --max-speed-rates R,R  after the unlimited runs, hfget --max-speed R, cut after --max-speed-seconds: achieved
             vs asked and the worst 10 s window, from the JSON progress events.
  A variant or row needing a flag this hfget's --help does not list reads "n/a: flag missing (...)".

For each: wall seconds; wall plus a sync() right after (hfget fdatasyncs every file before publishing it, the
others leave their data in the page cache, so "+sync" is the like-for-like time to durable files);
throughput; CPU seconds (user+sys of the tool and its reaped children, from wait4) and CPU seconds per GB;
peak RSS (ru_maxrss: for xargs+curl, of the largest single process), and peak RssAnon and RssFile sampled
every 100 ms from /proc (the largest process; anonymous memory is what issue 17's 64 MiB target is on);
hfget's final connection count (`conns`: its last {"event":"connections"} JSON event, or a fixed N); the requests the Hub and the CDN saw
and the body bytes they sent, as a multiple of the model's size; the CPU the servers (nginx + emulator)
used and the CPU anything else on the machine used meanwhile (noise); the time relative to hfget's.
Every tool runs --repeat times (default 3, round-robin, except that a tool whose first run took longer than
--repeat-limit seconds runs once: those are bound by the rate cap, not by noise); the row shows the run with
the median wall time, and the spread column the fastest and slowest. Before each run it waits (at most
--idle-wait seconds) for the machine to be idle, so that others' builds do not land in the numbers; the
`other` column says how much CPU something else still used during the run.

--xet runs the Xet scenario instead (bench/xet_bench.py, hfget issue 18): the model uploaded once through the
JS Xet writer (timed), xorbs served by the same nginx as the bridge's bodies, then hfget (Xet), hfget --no-xet
(bridge), the JS reader's snapshotDownload over Xet and `hf download` (hf_xet; skipped without `hf`) side by
side, with xorb vs file bytes on the wire, a kill -9 resume over Xet, and the issue's targets (--xet-tools
picks the rows; the model has no empty file there).

hfget also gets, in the unlimited scenario, a no-op re-run on the complete download (it must send only the
revision and listing requests), and in the capped scenario a resume: SIGKILL once about half the bytes are on
disk (in the last capped scenario), then the same command again, reporting the bytes re-fetched against the bytes that were missing.

Every child has a timeout and runs in its own process group; servers are stopped by PID; temp dirs are removed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))

import harness  # noqa: E402
from make_model import parse_size  # noqa: E402

REPO = "bench/model"
DEFAULT_TOOLS = ("hfget", "hfget-c32", "aria2c", "curl", "curl-p8", "hub-js")
# Not in the default set (the tables of earlier runs were made without them): curl 16 at a time, the issue 17
# peer, and `hf download` of huggingface_hub (8 workers, its default, and 16).
ALL_TOOLS = DEFAULT_TOOLS + ("curl-p16", "hf", "hf-w16")
BASELINE = "hfget-baseline"   # --hfget-baseline: another hfget binary, default flags
ALL_SCENARIOS = ("unlimited", "capped")   # "capped" stands for one capped-RATE scenario per --rate-cap value
GB, GIB, MIB = 1e9, 2**30, 2**20
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------------------------------ measuring

class Timeout(Exception):
    pass


# ru_maxrss counts the memory of the process image an exec replaced, so a tool forked from this Python process
# (~40 MiB resident) would never report less than that. This launcher, small itself, forks and execs the tool and
# writes the tool's own rusage (with its reaped children's) to a file.
LAUNCHER_C = r"""
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
  if (argc < 3) return 127;
  pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) { execvp(argv[2], argv + 2); perror(argv[2]); _exit(127); }
  int status = 0; struct rusage usage;
  if (wait4(pid, &status, 0, &usage) < 0) return 127;
  FILE *out = fopen(argv[1], "w");
  if (!out) return 127;
  fprintf(out, "%ld.%06ld %ld.%06ld %ld\n", (long)usage.ru_utime.tv_sec, (long)usage.ru_utime.tv_usec,
          (long)usage.ru_stime.tv_sec, (long)usage.ru_stime.tv_usec, usage.ru_maxrss);
  fclose(out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
"""
LAUNCHER: str | None = None


def build_launcher(work: Path) -> None:
    global LAUNCHER
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not compiler:
        print("no C compiler: peak RSS will include the forking Python's (about 40 MiB)", file=sys.stderr)
        return
    source, binary = work / "rusage_exec.c", work / "rusage_exec"
    source.write_text(LAUNCHER_C)
    subprocess.run([compiler, "-O2", "-o", str(binary), str(source)], check=True, timeout=120)
    LAUNCHER = str(binary)


def busy_cpu_seconds() -> float:
    """CPU seconds the whole machine has spent busy since boot (/proc/stat, all but idle and iowait)."""
    with open("/proc/stat") as stat:
        fields = [int(v) for v in stat.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


def wait_for_idle(max_wait: float, threshold: float = 0.15) -> float:
    """Wait (at most max_wait seconds) until the machine has been idle for 2 s in a row: less than `threshold`
    CPU-seconds busy per second, whoever is busy. Returns the seconds waited. Other people's builds and tests
    on a shared 2-core machine would otherwise land in the measurement (the `other` column shows what did)."""
    started = time.monotonic()
    quiet = 0
    previous = busy_cpu_seconds()
    while quiet < 2 and time.monotonic() - started < max_wait:
        time.sleep(1.0)
        current = busy_cpu_seconds()
        quiet = quiet + 1 if current - previous < threshold else 0
        previous = current
    return time.monotonic() - started


def group_cpu_seconds(groups: set[int]) -> float:
    """user+sys CPU seconds of the live processes in these process groups (the servers)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) in groups:          # pgrp
            total += int(fields[11]) + int(fields[12])   # utime, stime
    return total / CLOCK_TICKS


def write_trace(trace_dir: Path, name: str, hub: harness.Hub, measured: Measured) -> None:
    """HFGET_BENCH_TRACE=DIR: one run's timeline, to see where its wall time went. NAME.emulator.json: every
    request the emulator answered (start, seconds); NAME.nginx.log: nginx's end time ($msec), duration,
    connection, status, bytes, URI and Range per request; NAME.run.json: when the tool started and ended."""
    trace_dir.mkdir(parents=True, exist_ok=True)
    (trace_dir / f"{name}.emulator.json").write_text(json.dumps(hub.requests()))
    if hub._nginx is not None:
        (trace_dir / f"{name}.nginx.log").write_text(hub._nginx.timing_log_text())
    (trace_dir / f"{name}.run.json").write_text(json.dumps({"started": measured.started_at, "wall": measured.wall,
                                                            "cpu": measured.cpu, "servers_cpu": measured.servers_cpu}))


# --server-cpus: the servers run on these CPUs and the tool under test on the others (None: no pinning).
SERVER_CPUS: set[int] | None = None
# --emulator-cpus: the Hub emulator (its CAS too) on these instead, apart from nginx (None: with nginx).
EMULATOR_CPUS: set[int] | None = None


def parse_cpu_list(text: str) -> set[int]:
    """"0-3,6" -> {0, 1, 2, 3, 6}; ValueError when a CPU is not this machine's or none would be left."""
    cpus: set[int] = set()
    for part in (p.strip() for p in text.split(",") if p.strip()):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    available = os.sched_getaffinity(0)
    if not cpus or not cpus < available:
        raise ValueError(f"--server-cpus {text}: must name some, not all, of the CPUs {sorted(available)}")
    return cpus


def client_cpus() -> set[int] | None:
    return os.sched_getaffinity(0) - SERVER_CPUS - (EMULATOR_CPUS or set()) if SERVER_CPUS else None


def cpu_split() -> str:
    """For the report's first line: which CPUs the servers and the tools ran on, when they were split."""
    cpus = client_cpus()
    if not cpus:
        return ""
    if EMULATOR_CPUS:
        return (f" (nginx on CPUs {sorted(SERVER_CPUS)}, the Hub emulator on {sorted(EMULATOR_CPUS)}, each tool on "
                f"{sorted(cpus)})")
    return f" (servers on CPUs {sorted(SERVER_CPUS)}, each tool on {sorted(cpus)})"


def pin_servers(hub: harness.Hub) -> None:
    """Every thread of the Hub's emulator and of nginx onto its group's CPUs (server_groups: SERVER_CPUS, or
    EMULATOR_CPUS for the emulator when --emulator-cpus set them apart); threads started later inherit them."""
    if not SERVER_CPUS:
        return
    for group, cpus in server_groups(hub).items():
        for pid in descendants(group):
            try:
                for thread in os.listdir(f"/proc/{pid}/task"):
                    os.sched_setaffinity(int(thread), cpus)
            except (OSError, ValueError):
                pass   # a thread or process that ended meanwhile


def server_groups(hub: harness.Hub) -> dict[int, set[int]]:
    """The process groups of the Hub's emulator and nginx (each was started in its own session), each with the
    CPUs it runs on."""
    groups = {}
    emulator, nginx = getattr(hub, "_emulator", None), getattr(getattr(hub, "_nginx", None), "_process", None)
    if emulator is not None:
        groups[emulator.pid] = EMULATOR_CPUS or SERVER_CPUS
    if nginx is not None:
        groups[nginx.pid] = SERVER_CPUS
    return groups


def descendants(pid: int) -> list[int]:
    """pid and every process below it (/proc/PID/task/PID/children), read now."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        try:
            pending += [int(child) for child in Path(f"/proc/{current}/task/{current}/children").read_text().split()]
        except (OSError, ValueError):
            pass
    return found


class MemorySampler:
    """Peak RssAnon and RssFile (KiB) of the largest single process under a PID, sampled every `interval` s.

    ru_maxrss counts file-backed pages too: a tool that maps the files it writes or hashes shows their page
    cache as its RSS. The issue's target (<= 64 MiB) is on anonymous memory, which only sampling can separate.
    A sample every 100 ms can miss a shorter peak; the figure is a lower bound of the true peak."""

    def __init__(self, pid: int, interval: float = 0.1) -> None:
        self.pid, self.interval = pid, interval
        self.peak_anon_kib = self.peak_file_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        for pid in descendants(self.pid):
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            values = {}
            for line in status.splitlines():
                key, _, rest = line.partition(":")
                if key in ("RssAnon", "RssFile"):
                    values[key] = int(rest.split()[0])
            self.peak_anon_kib = max(self.peak_anon_kib, values.get("RssAnon", 0))
            self.peak_file_kib = max(self.peak_file_kib, values.get("RssFile", 0))

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


@dataclass
class Measured:
    code: int
    wall: float          # seconds from spawn to reaping
    synced: float        # wall + the time of a sync() right after
    user: float
    system: float
    maxrss_kib: int
    servers_cpu: float   # CPU the servers used meanwhile
    other_cpu: float     # CPU anything else used meanwhile (busy - tool - servers)
    stdout: str
    stderr: str
    peak_anon_kib: int = 0   # sampled RssAnon / RssFile of the largest process (MemorySampler)
    peak_file_kib: int = 0
    started_at: float = 0.0   # time.time() at the spawn: the clock the servers' logs use

    @property
    def cpu(self) -> float:
        return self.user + self.system


def run_measured(argv: list[str], *, env: dict[str, str], timeout: float, log_dir: Path, name: str,
                 servers: set[int] = frozenset(), cwd: str | Path | None = None) -> Measured:
    """Run argv to completion in its own process group; rusage from wait4; killed (group) after `timeout`."""
    out_path, err_path = log_dir / f"{name}.stdout", log_dir / f"{name}.stderr"
    usage_path = log_dir / f"{name}.rusage"
    if LAUNCHER:
        argv = [LAUNCHER, str(usage_path), *argv]
    os.sync()   # the previous run's dirty pages are not this run's writeback
    busy_before, servers_before = busy_cpu_seconds(), group_cpu_seconds(servers)
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        started, started_at = time.monotonic(), time.time()
        cpus = client_cpus()
        process = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                   start_new_session=True,
                                   preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
    timed_out = threading.Event()

    def kill_group() -> None:
        timed_out.set()
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    watchdog = threading.Timer(timeout, kill_group)
    watchdog.start()
    sampler = MemorySampler(process.pid)
    try:
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        watchdog.cancel()
        sampler.stop()
    wall = time.monotonic() - started
    busy = busy_cpu_seconds() - busy_before
    servers_cpu = group_cpu_seconds(servers) - servers_before
    process.returncode = os.waitstatus_to_exitcode(status)
    try:   # anything the child left behind in its group (an xargs'd curl after a timeout)
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    os.sync()
    synced = time.monotonic() - started
    stdout = out_path.read_text(errors="replace")
    stderr = err_path.read_text(errors="replace")
    if timed_out.is_set():
        raise Timeout(f"{name}: killed after {timeout:.0f}s\n{stderr[-2000:]}")
    user, system, maxrss = usage.ru_utime, usage.ru_stime, usage.ru_maxrss
    if LAUNCHER and usage_path.exists():
        user_text, system_text, maxrss_text = usage_path.read_text().split()
        user, system, maxrss = float(user_text), float(system_text), int(maxrss_text)
    other = max(0.0, busy - (usage.ru_utime + usage.ru_stime) - servers_cpu)
    return Measured(process.returncode, wall, synced, user, system, maxrss, servers_cpu, other, stdout, stderr,
                    sampler.peak_anon_kib, sampler.peak_file_kib, started_at)


def bytes_on_disk(root: Path) -> int:
    """Bytes allocated under root (hfget writes chunks with pwrite, so a partial file can be sparse)."""
    total = 0
    for directory, _, names in os.walk(root):
        for name in names:
            try:
                total += os.lstat(os.path.join(directory, name)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


# ------------------------------------------------------------------------------------------ checking

def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(4 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def expected_files(model: Path) -> dict[str, tuple[int, str]]:
    return {p.relative_to(model).as_posix(): (p.stat().st_size, sha256_file(p))
            for p in sorted(model.rglob("*")) if p.is_file()}


def check_download(root: Path, expected: dict[str, tuple[int, str]]) -> list[str]:
    """Every expected file under root (symlinks followed) with the right size and SHA-256, and nothing else
    (metadata under .cache/ is allowed: hfget's local-dir metadata, as `hf download` writes)."""
    problems = []
    for relative, (size, digest) in expected.items():
        path = root / relative
        if not path.is_file():
            problems.append(f"missing {relative}")
            continue
        actual_size = path.stat().st_size
        if actual_size != size:
            problems.append(f"{relative}: {actual_size} bytes, expected {size}")
        elif sha256_file(path) != digest:
            problems.append(f"{relative}: SHA-256 differs from the source")
    for path in root.rglob("*"):
        relative = path.relative_to(root).as_posix()
        if (path.is_file() or path.is_symlink()) and relative not in expected and ".cache" not in path.parts:
            problems.append(f"unexpected file {relative}")
    return problems


def sent_bytes(hub_log: list[dict], cdn_log: list[dict]) -> int:
    """Body bytes sent to the client: every CDN response, plus the Hub's /resolve/ answers (small files)."""
    return sum(r["bytes"] for r in cdn_log) + sum(r["bytes_sent"] for r in hub_log if "/resolve/" in r["path"])


def parse_json_lines(text: str) -> list[dict]:
    events = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            events.append(value)
    return events


def parse_rate(text: str) -> float:
    """Bytes per second from "8m", "1.5G", "200k" or "1000": curl's and nginx's suffixes, powers of 1024."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmMgG]?)\s*", text)
    if not match:
        raise ValueError(f"not a rate: {text!r}")
    return float(match.group(1)) * 1024 ** " kmg".index(match.group(2).lower() or " ")


# ------------------------------------------------------------------------------------------ tools

@dataclass
class Result:
    scenario: str
    tool: str
    wall: float | None = None
    synced: float | None = None
    cpu: float | None = None
    maxrss_kib: int | None = None
    anon_kib: int | None = None       # sampled peak RssAnon (MemorySampler)
    file_kib: int | None = None       # sampled peak RssFile
    connections: int | None = None    # hfget's final connection count (last `connections` event; fixed: N)
    servers_cpu: float | None = None
    other_cpu: float | None = None
    hub_requests: int | None = None
    cdn_requests: int | None = None
    bytes_sent: int | None = None     # body bytes the CDN and the Hub's /resolve/ sent (nginx/emulator logs)
    ok: bool = False
    note: str = ""
    walls: list[float] = field(default_factory=list)   # every repeat's wall time
    extra: dict = field(default_factory=dict)


class Bench:
    def __init__(self, args, work: Path, expected: dict[str, tuple[int, str]]) -> None:
        self.args, self.work, self.expected = args, work, expected
        self.total = sum(size for size, _ in expected.values())
        self.logs = work / "logs"
        self.logs.mkdir(exist_ok=True)
        # A generous bound: 60 s plus the whole model at 4 MB/s, which every tool beats by far.
        self.timeout = 60 + self.total / 4e6
        self.node = shutil.which("node")
        # The flags this hfget knows: a variant or row that needs one it lacks (the controller's flags before
        # they land) says "n/a: flag missing" instead of failing the run.
        help_text = subprocess.run([args.hfget, "download", "--help"], capture_output=True, text=True,
                                   timeout=30).stdout
        self.hfget_flags = set(re.findall(r"(--[a-z][a-z0-9-]*)", help_text))
        ceiling = re.search(r"--max-connections\s+INT=(\d+)", help_text)
        self.ceiling = int(ceiling.group(1)) if ceiling else None

    def extra_flags(self, tool: str) -> list[str]:
        return ["--connections", "32"] if tool == "hfget-c32" else list(self.args.variants.get(tool, []))

    def fixed_connections(self, tool: str) -> int | None:
        """N for a variant that fixes --connections N; None for the default flags (the controller)."""
        flags = self.extra_flags(tool)
        if "--connections" in flags[:-1]:
            return int(flags[flags.index("--connections") + 1])
        return None

    def missing_flags(self, flags: list[str]) -> list[str]:
        return [f for f in flags if f.startswith("--") and f.split("=")[0] not in self.hfget_flags]

    def fresh(self, name: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.work))

    def urls(self, hub: harness.Hub) -> list[tuple[str, str]]:
        return [(relative, f"{hub.url}/{REPO}/resolve/main/{quote(relative)}") for relative in self.expected]

    def hfget_argv(self, target: Path, extra: list[str] = (), binary: str | None = None) -> list[str]:
        return [binary or self.args.hfget, "download", REPO, "--local-dir", str(target), "--progress", "json", *extra]

    def binary_of(self, tool: str) -> str:
        return self.args.hfget_baseline if tool == BASELINE else self.args.hfget

    def command(self, tool: str, hub: harness.Hub, run_dir: Path) -> tuple[list[str], dict[str, str], Path]:
        """(argv, env, the folder the files end up in) for one tool."""
        home = run_dir / "home"
        home.mkdir()
        target = run_dir / "download"
        if tool.startswith("hfget"):
            extra = self.extra_flags(tool)
            return self.hfget_argv(target, extra, self.binary_of(tool)), harness.clean_hfget_env(home, hub.url), target
        env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "LANG": "C.UTF-8",
               "HOME": str(home), "NO_PROXY": "*", "no_proxy": "*"}
        if tool == "aria2c":
            listing = run_dir / "aria2c.input"
            listing.write_text("".join(f"{url}\n  dir={target}\n  out={relative}\n"
                                       for relative, url in self.urls(hub)))
            return (["aria2c", "--no-conf", "-x16", "-s16", "-j8", f"--input-file={listing}",
                     "--console-log-level=warn", "--summary-interval=0", "--download-result=hide",
                     "--max-tries=3", "--retry-wait=1"], env, target)
        if tool in ("curl", "curl-p8", "curl-p16"):
            listing = run_dir / "curl.args"
            listing.write_bytes(b"".join(f"{target / relative}\0{url}\0".encode() for relative, url in self.urls(hub)))
            parallel = {"curl-p8": "8", "curl-p16": "16"}.get(tool, "1")
            return (["xargs", "-0", "-n", "2", "-P", parallel, "-a", str(listing),
                     "curl", "-sSfL", "--create-dirs", "-o"], env, target)
        if tool in ("hf", "hf-w16"):
            # huggingface_hub's own download (hf_transfer off: it is not what users get by default).
            env.update({"HF_ENDPOINT": hub.url, "HF_HOME": str(home / ".cache" / "huggingface"),
                        "HF_HUB_DISABLE_TELEMETRY": "1"})
            workers = "16" if tool == "hf-w16" else "8"
            return ["hf", "download", REPO, "--local-dir", str(target), "--max-workers", workers], env, target
        if tool == "hub-js":
            # snapshotDownload prints a debug line per file on stdout; the snapshot folder is the last line.
            return [self.node, str(BENCH / "hub_js_download.mjs"), hub.url, REPO, str(target)], env, target
        raise ValueError(tool)

    def unavailable(self, tool: str) -> str | None:
        if tool == "hub-js":
            if not self.node:
                return "node is not installed"
            if not (BENCH / "node_modules" / "@huggingface" / "hub" / "package.json").exists():
                return "@huggingface/hub is not installed: run `npm install --prefix bench`"
        program = {"aria2c": "aria2c", "curl": "curl", "curl-p8": "curl", "curl-p16": "curl", "hf": "hf",
                   "hf-w16": "hf"}.get(tool)
        if program and not shutil.which(program):
            return f"{program} is not installed"
        if tool.startswith("hfget") and (missing := self.missing_flags(self.extra_flags(tool))):
            return f"n/a: flag missing ({', '.join(missing)})"
        return None

    def run_tool(self, scenario: str, tool: str, hub: harness.Hub, repeat: int) -> Result:
        result = Result(scenario, tool)
        run_dir = self.fresh(f"{scenario}-{tool}")
        name = f"{scenario}-{tool}-{repeat}"
        try:
            argv, env, target = self.command(tool, hub, run_dir)
            trace_dir = os.environ.get("HFGET_BENCH_TRACE")
            if trace_dir and tool.startswith("hfget") and "--log-file" in self.hfget_flags:
                # Its closing lines say where the connections' time went (trace_report.py reads them).
                Path(trace_dir).mkdir(parents=True, exist_ok=True)
                argv += ["--log-file", str(Path(trace_dir) / f"{name}.hfget.log")]
            hub.reset_logs()
            pin_servers(hub)
            os.sync()
            waited = wait_for_idle(self.args.idle_wait) if self.args.idle_wait > 0 else 0.0
            print(f"[{scenario}] {tool} #{repeat + 1}: {' '.join(argv[:6])} ..."
                  + (f" (waited {waited:.0f}s for an idle machine)" if waited >= 3 else ""), file=sys.stderr, flush=True)
            try:
                measured = run_measured(argv, env=env, timeout=self.timeout, log_dir=self.logs, name=name,
                                        servers=set(server_groups(hub)))
            except Timeout as timeout:
                result.note = str(timeout).splitlines()[0]
                return result
            result.wall, result.synced, result.cpu = measured.wall, measured.synced, measured.cpu
            result.maxrss_kib, result.servers_cpu, result.other_cpu = (measured.maxrss_kib, measured.servers_cpu,
                                                                       measured.other_cpu)
            result.anon_kib, result.file_kib = measured.peak_anon_kib, measured.peak_file_kib
            if tool.startswith("hfget"):
                counts = [e for e in parse_json_lines(measured.stderr) if e.get("event") == "connections"]
                result.connections = int(counts[-1]["count"]) if counts else self.fixed_connections(tool)
                result.extra["connection_changes"] = len(counts)
            hub_log, cdn_log = hub.hub_requests(), hub.cdn_requests()
            if trace_dir:
                write_trace(Path(trace_dir), name, hub, measured)
            result.hub_requests, result.cdn_requests = len(hub_log), len(cdn_log)
            result.bytes_sent = sent_bytes(hub_log, cdn_log)
            if measured.code != 0:
                last = (measured.stderr.strip().splitlines() or [""])[-1]
                result.note = f"exit {measured.code}: {last[:200]}"
                return result
            root = target
            if tool == "hub-js":
                lines = measured.stdout.strip().splitlines()
                root = Path(lines[-1]) if lines else target
            problems = check_download(root, self.expected)
            result.ok = not problems
            if problems:
                result.note = f"{len(problems)} problems: " + "; ".join(problems[:3])
            if (tool in ("hfget", BASELINE) and scenario == "unlimited" and result.ok and repeat == 0
                    and not self.args.no_extras):
                result.extra["noop"] = self.noop_rerun(hub, env, target, self.binary_of(tool))
            print(f"[{scenario}] {tool} #{repeat + 1}: {result.wall:.2f}s, {'ok' if result.ok else result.note}",
                  file=sys.stderr, flush=True)
            return result
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)

    # -- hfget extras -------------------------------------------------------------------------------

    def raw_limits(self, hub: harness.Hub, repeat: int = 5) -> dict:
        """One curl of the largest blob to /dev/null and to a file on the target disk: what one stream of this
        server and this disk can do, measured in the same run (median of `repeat`)."""
        relative = max(self.expected, key=lambda name: self.expected[name][0])
        url = dict(self.urls(hub))[relative]
        size = self.expected[relative][0]
        target = self.fresh("raw") / "blob"
        timings: dict[str, list[float]] = {"/dev/null": [], "file": []}
        for _ in range(repeat):
            for where, out in (("/dev/null", "/dev/null"), ("file", str(target))):
                target.unlink(missing_ok=True)
                started = time.monotonic()
                subprocess.run(["curl", "-sSfL", "--noproxy", "*", "-o", out, url], check=True, timeout=self.timeout)
                timings[where].append(time.monotonic() - started)
        return {"file": relative, "bytes": size,
                "null_mbps": size / statistics.median(timings["/dev/null"]) / 1e6,
                "file_mbps": size / statistics.median(timings["file"]) / 1e6}

    def noop_rerun(self, hub: harness.Hub, env: dict[str, str], target: Path, binary: str) -> dict:
        hub.reset_logs()
        measured = run_measured(self.hfget_argv(target, binary=binary), env=env, timeout=120, log_dir=self.logs,
                                name="noop")
        hub_paths = [f"{r['method']} {r['path']}" + (f"?{r['query']}" if r.get("query") else "")
                     for r in hub.hub_requests()]
        return {"exit": measured.code, "wall": measured.wall, "cpu": measured.cpu,
                "hub_requests": hub_paths, "cdn_requests": len(hub.cdn_requests())}

    def max_speed(self, hub: harness.Hub, rate_text: str) -> dict:
        """hfget --max-speed RATE for at most --max-speed-seconds, then SIGKILL: the run is cut short instead of
        sized by --include, so every rate gets the same measuring time whatever the model's size (a 10 MB/s
        run of the whole model would take minutes). The achieved rate and the 10 s windows come from the JSON
        progress events (--progress-interval 1), each stamped here on arrival with the monotonic clock: their
        own `time` field has whole seconds only. The first event is the origin, so start-up (revision, listing)
        is not counted; a run that completes before the time is up ends at its `done` event."""
        asked = parse_rate(rate_text)
        row = {"rate": rate_text, "asked": asked}
        if missing := self.missing_flags(["--max-speed"]):
            row["note"] = f"n/a: flag missing ({missing[0]})"
            return row
        run_dir = self.fresh("max-speed")
        try:
            home = run_dir / "home"
            home.mkdir()
            env = harness.clean_hfget_env(home, hub.url)
            argv = self.hfget_argv(run_dir / "download", ["--max-speed", rate_text, "--progress-interval", "1"])
            if self.args.idle_wait > 0:
                wait_for_idle(self.args.idle_wait)
            print(f"[unlimited] hfget --max-speed {rate_text} for up to {self.args.max_speed_seconds:.0f}s ...",
                  file=sys.stderr, flush=True)
            samples: list[tuple[float, dict]] = []
            process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, start_new_session=True)
            sampler = MemorySampler(process.pid)

            def read_events() -> None:
                for line in process.stderr:
                    now = time.monotonic()
                    samples.extend((now, e) for e in parse_json_lines(line.decode(errors="replace")))

            reader = threading.Thread(target=read_events, daemon=True)
            reader.start()
            try:
                process.wait(timeout=self.args.max_speed_seconds)
                completed = process.returncode == 0
            except subprocess.TimeoutExpired:
                completed = False
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
            sampler.stop()
            reader.join(timeout=10)
            points = [(t, int(e["bytes_this_run"])) for t, e in samples
                      if e.get("event") in ("progress", "done") and "bytes_this_run" in e]
            row.update({"completed": completed, "anon_kib": sampler.peak_anon_kib, "events": len(points)})
            if len(points) < 2 or points[-1][0] - points[0][0] < 2:
                row["note"] = f"too few progress events ({len(points)}) to measure a rate"
                return row
            (t0, b0), (t1, b1) = points[0], points[-1]
            row.update({"seconds": t1 - t0, "bytes": b1 - b0, "achieved": (b1 - b0) / (t1 - t0)})
            windows = []
            for i, (ta, ba) in enumerate(points):
                later = next(((tb, bb) for tb, bb in points[i + 1:] if tb - ta >= 10.0), None)
                if later:
                    windows.append((later[1] - ba) / (later[0] - ta))
            if windows:
                row["window_min"], row["window_max"] = min(windows), max(windows)
            return row
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)

    def resume(self, hub: harness.Hub) -> dict:
        """SIGKILL hfget at about half the bytes on disk, re-run, compare re-fetched with missing bytes."""
        run_dir = self.fresh("resume")
        try:
            home = run_dir / "home"
            home.mkdir()
            target = run_dir / "download"
            env = harness.clean_hfget_env(home, hub.url)
            hub.reset_logs()
            os.sync()
            if self.args.idle_wait > 0:
                wait_for_idle(self.args.idle_wait)
            with open(self.logs / "resume-killed.stderr", "wb") as err:
                process = subprocess.Popen(self.hfget_argv(target), env=env, stdin=subprocess.DEVNULL,
                                           stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
            started = time.monotonic()
            goal = self.total * self.args.kill_at
            try:
                while time.monotonic() - started < self.timeout and process.poll() is None:
                    if target.exists() and bytes_on_disk(target) >= goal:
                        break
                    time.sleep(0.02)
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            code = process.wait(timeout=30)
            killed_after = time.monotonic() - started
            if code != -signal.SIGKILL:
                return {"error": f"hfget ended by itself (exit {code}) before it was killed; use a larger --size"}
            held = bytes_on_disk(target)
            hub.reset_logs()   # waits for nginx to log the killed connections first
            measured = run_measured(self.hfget_argv(target), env=env, timeout=self.timeout, log_dir=self.logs,
                                    name="resume-rerun", servers=set(server_groups(hub)))
            events = parse_json_lines(measured.stderr)
            # What the re-run kept: the files already complete (the `start` event's bytes_done) plus the
            # partial files' resumed_bytes (their file_started events).
            start = next((e for e in events if e.get("event") == "start"), {})
            complete = int(start.get("bytes_done", 0))
            resumed = sum(int(e.get("resumed_bytes", 0)) for e in events if e.get("event") == "file_started")
            cdn = hub.cdn_requests()
            refetched = sent_bytes(hub.hub_requests(), cdn)
            problems = check_download(target, self.expected) if measured.code == 0 else [f"exit {measured.code}"]
            return {"killed_after": killed_after, "on_disk_at_kill": held, "complete_bytes": complete,
                    "resumed_bytes": resumed, "kept": complete + resumed, "missing": self.total - complete - resumed,
                    "missing_by_disk": self.total - held, "refetched": refetched, "cdn_requests": len(cdn),
                    "rerun_wall": measured.wall, "rerun_exit": measured.code, "ok": not problems,
                    "problems": problems[:3]}
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)


def median_result(runs: list[Result]) -> Result:
    """The run with the median wall time (the lower middle one for an even count); failures win."""
    failed = [r for r in runs if not r.ok]
    if failed:
        chosen = failed[0]
    else:
        ordered = sorted(runs, key=lambda r: r.wall)
        chosen = ordered[(len(ordered) - 1) // 2]
    chosen.walls = [r.wall for r in runs if r.wall is not None]
    chosen.extra["hub_requests_runs"] = [r.hub_requests for r in runs if r.wall is not None]
    chosen.extra["cdn_requests_runs"] = [r.cdn_requests for r in runs if r.wall is not None]
    for r in runs:
        chosen.extra.update({k: v for k, v in r.extra.items() if k not in chosen.extra})
    return chosen


# ------------------------------------------------------------------------------------------ report

def table(scenario: str, results: list[Result], total: int, files: int, title: str) -> str:
    rows = [r for r in results if r.scenario == scenario]
    base = next((r for r in rows if r.tool == "hfget" and r.ok), None)
    repeats = max((len(r.walls) for r in rows), default=1)
    width = max([12] + [len(r.tool) for r in rows])
    lines = [f"\n{title}: {files} files, {total / GB:.2f} GB ({total / GIB:.2f} GiB)"
             + (f"; median of up to {repeats} runs (spread: fastest-slowest wall)" if repeats > 1 else ""), ""]
    header = (f"{'tool':<{width}} {'wall s':>7} {'+sync s':>8} {'MB/s':>6} {'CPU s':>6} {'CPU s/GB':>8} "
              f"{'RSS MiB':>7} {'hub req':>7} {'CDN req':>7} {'sent/size':>9} {'srv CPU':>7} {'other':>5} "
              f"{'x hfget':>7} {'x +sync':>7} {'conns':>5} {'anon MiB':>8} {'file MiB':>8}"
              + (f" {'spread':>11}" if repeats > 1 else "") + "  check")
    lines += [header, "-" * len(header)]
    for r in rows:
        if r.wall is None:
            lines.append(f"{r.tool:<{width}} {r.note}")
            continue
        ratio = f"{r.wall / base.wall:.2f}" if base and r.ok else "-"
        ratio_synced = f"{r.synced / base.synced:.2f}" if base and r.ok else "-"
        spread = f" {min(r.walls):>5.2f}-{max(r.walls):<5.2f}" if repeats > 1 else ""
        conns = str(r.connections) if r.connections is not None else "-"
        anon = f"{r.anon_kib / 1024:.1f}" if r.anon_kib else "-"
        mapped = f"{r.file_kib / 1024:.1f}" if r.file_kib else "-"
        lines.append(f"{r.tool:<{width}} {r.wall:>7.2f} {r.synced:>8.2f} {total / r.wall / 1e6:>6.0f} {r.cpu:>6.2f} "
                     f"{r.cpu / (total / GB):>8.2f} {r.maxrss_kib / 1024:>7.1f} {r.hub_requests:>7} "
                     f"{r.cdn_requests:>7} {r.bytes_sent / total:>9.3f} {r.servers_cpu:>7.2f} {r.other_cpu:>5.1f} "
                     f"{ratio:>7} {ratio_synced:>7} {conns:>5} {anon:>8} {mapped:>8}{spread}  "
                     f"{'ok' if r.ok else r.note}")
    return "\n".join(lines)


def rate_of(row: Result | None, total: int) -> float | None:
    return total / row.wall if row is not None and row.ok and row.wall else None


def verdict(value: float, goal: float) -> str:
    return f"{'PASS' if value >= goal else 'MISS'} (margin {value / goal - 1:+.1%})"


def target_lines(scenario: str, cap: float | None, results: list[Result], total: int, fixed: dict[str, int],
                 ceiling: int | None, unlimited_rate: float | None) -> list[str]:
    """Per scenario: default flags against the best fixed --connections and against curl x16, and issue 17's
    targets with PASS/MISS and the margin (value / goal - 1). Rates are the median run's, in MB/s (1e6)."""
    rows = {r.tool: r for r in results if r.scenario == scenario}
    default = rate_of(rows.get("hfget"), total)
    if default is None:
        return [f"[{scenario}] no ratios: hfget with default flags did not run or failed"]
    fixed_rates = {tool: rate_of(rows.get(tool), total) for tool in fixed}
    fixed_rates = {tool: rate for tool, rate in fixed_rates.items() if rate}
    lines = []
    best_tool = max(fixed_rates, key=fixed_rates.get) if fixed_rates else None
    best = fixed_rates.get(best_tool)
    if best:
        lines.append(f"[{scenario}] default {default / 1e6:.0f} MB/s vs best fixed {best_tool} {best / 1e6:.0f} MB/s: "
                     f"ratio {default / best:.3f}")
    curl16 = rate_of(rows.get("curl-p16"), total)
    if curl16:
        lines.append(f"[{scenario}] default vs curl x16 {curl16 / 1e6:.0f} MB/s: ratio {default / curl16:.2f}")
    cap_mib = cap / MIB if cap else None
    if cap and abs(cap_mib - 40) < 0.5:
        if curl16:
            lines.append(f"[{scenario}] target >= 1.8 x curl x16: {verdict(default, 1.8 * curl16)}")
        if best:
            lines.append(f"[{scenario}] target within 10 % of best fixed: {verdict(default, 0.9 * best)}")
    elif cap and abs(cap_mib - 8) < 0.5:
        lines.append(f"[{scenario}] target >= 400 MB/s (2-core machine): {verdict(default, 400e6)}")
        bounds = [(f"unlimited {unlimited_rate / 1e6:.0f} MB/s", unlimited_rate)] if unlimited_rate else []
        if ceiling:
            bounds.append((f"ceiling {ceiling} x cap = {ceiling * cap / 1e6:.0f} MB/s", ceiling * cap))
        if bounds:
            name, bound = min(bounds, key=lambda b: b[1])
            lines.append(f"[{scenario}] target >= 90 % of min(ceiling x cap, unlimited) = 90 % of {name}: "
                         f"{verdict(default, 0.9 * bound)}")
        else:
            lines.append(f"[{scenario}] target >= 90 % of min(ceiling x cap, unlimited): not checked (no "
                         f"--max-connections default in hfget --help and no unlimited run)")
    elif cap is None and best:
        lines.append(f"[{scenario}] target within 5 % of best fixed: {verdict(default, 0.95 * best)}")
    return lines


def max_speed_lines(rows: list[dict], unlimited_rate: float | None) -> list[str]:
    if not rows:
        return []
    lines = ["\nhfget --max-speed on the unlimited scenario (achieved from the first to the last progress event; "
             "10 s windows between events >= 10 s apart):", "",
             f"{'asked':>8} {'asked MB/s':>10} {'achieved':>9} {'ratio':>6} {'worst 10 s window':>26} "
             f"{'seconds':>7} {'anon MiB':>8}  check"]
    for row in rows:
        if "achieved" not in row:
            lines.append(f"{row['rate']:>8} {row['asked'] / 1e6:>10.1f} {row.get('note', '')}")
            continue
        ratio = row["achieved"] / row["asked"]
        window = (f"{row['window_min'] / 1e6:.1f}-{row['window_max'] / 1e6:.1f} MB/s "
                  f"({max(abs(row['window_min'] / row['asked'] - 1), abs(row['window_max'] / row['asked'] - 1)):.1%})"
                  if "window_min" in row else "- (run < 10 s)")
        check = "PASS" if abs(ratio - 1) <= 0.05 else "MISS"
        check += f" ({ratio - 1:+.1%})" + ("; the model ran out before the time" if row["completed"] else "")
        if check.startswith("MISS") and unlimited_rate and unlimited_rate < row["asked"]:
            check += f"; asked more than the unlimited default run's {unlimited_rate / 1e6:.0f} MB/s"
        lines.append(f"{row['rate']:>8} {row['asked'] / 1e6:>10.1f} {row['achieved'] / 1e6:>9.1f} {ratio:>6.3f} "
                     f"{window:>26} {row['seconds']:>7.1f} {row['anon_kib'] / 1024:>8.1f}  {check}")
    return lines


def baseline_comparison(scenario: str, results: list[Result]) -> dict | None:
    """hfget against --hfget-baseline in one scenario: the median walls and their ratio, the spreads, every run's
    Hub and CDN request counts, and whether the no-op re-runs sent the same requests."""
    rows = {r.tool: r for r in results if r.scenario == scenario}
    new, old = rows.get("hfget"), rows.get(BASELINE)
    if new is None or old is None or new.wall is None or old.wall is None:
        return None
    compared = {"scenario": scenario, "ok": new.ok and old.ok, "wall": new.wall, "baseline_wall": old.wall,
                "ratio": new.wall / old.wall, "walls": new.walls, "baseline_walls": old.walls}
    for key in ("hub_requests_runs", "cdn_requests_runs"):
        compared[key], compared["baseline_" + key] = new.extra.get(key, []), old.extra.get(key, [])
    if "noop" in new.extra and "noop" in old.extra:
        compared["same_noop_requests"] = (sorted(new.extra["noop"]["hub_requests"]) ==
                                          sorted(old.extra["noop"]["hub_requests"])
                                          and new.extra["noop"]["cdn_requests"] == old.extra["noop"]["cdn_requests"])
    return compared


def format_comparison(compared: dict) -> str:
    """The Hub's request count is fixed by the repo (revision, listing, a resolve per file); the CDN's is not:
    an idle connection splits the largest range in flight, so it varies from run to run with the timing, and
    is shown as median and range for each binary (a self-vs-self run shows how far it varies)."""
    def counts(runs: list[int]) -> str:
        if not runs:
            return "-"
        return f"{statistics.median(runs):g} ({min(runs)}-{max(runs)})" if min(runs) != max(runs) else f"{runs[0]}"

    name = f"hfget vs {BASELINE} ({compared['scenario']})"
    if not compared["ok"]:
        return f"{name}: not compared: a run failed (see the table)"
    hub, base_hub = compared["hub_requests_runs"], compared["baseline_hub_requests_runs"]
    same_hub = set(hub) == set(base_hub) and len(set(hub)) == 1
    line = (f"{name}: median wall {compared['wall']:.2f}s vs {compared['baseline_wall']:.2f}s, ratio "
            f"{compared['ratio']:.3f} (spread {min(compared['walls']):.2f}-{max(compared['walls']):.2f} vs "
            f"{min(compared['baseline_walls']):.2f}-{max(compared['baseline_walls']):.2f}); Hub requests "
            + (f"{hub[0]} in every run of both" if same_hub else f"DIFFERENT: {hub} vs {base_hub}")
            + f"; CDN requests {counts(compared['cdn_requests_runs'])} vs "
              f"{counts(compared['baseline_cdn_requests_runs'])}")
    if "same_noop_requests" in compared:
        line += f"; no-op re-run requests {'the same' if compared['same_noop_requests'] else 'DIFFERENT'}"
    return line


def report_extras(results: list[Result], resume: dict | None, total: int) -> str:
    lines = []
    noop = next((r.extra["noop"] for r in results if "noop" in r.extra and r.tool == "hfget"), None)
    if noop:
        lines.append(f"\nhfget no-op re-run on the complete download: exit {noop['exit']}, {noop['wall']:.2f}s wall, "
                     f"{noop['cpu']:.2f}s CPU; {len(noop['hub_requests'])} Hub requests, {noop['cdn_requests']} CDN "
                     f"requests:")
        lines += [f"    {request}" for request in noop["hub_requests"]]
    if resume:
        if "error" in resume:
            lines.append(f"\nhfget resume after kill -9: {resume['error']}")
        else:
            over = resume["refetched"] - resume["missing"]
            lines.append(
                f"\nhfget resume after kill -9 ({resume['scenario']} scenario): killed after {resume['killed_after']:.2f}s with "
                f"{resume['on_disk_at_kill']:,} bytes on disk ({resume['on_disk_at_kill'] / total:.0%} of "
                f"{total:,})\n"
                f"    re-run: exit {resume['rerun_exit']}, {resume['rerun_wall']:.2f}s, "
                f"{'complete and byte-correct' if resume['ok'] else 'FAILED: ' + '; '.join(resume['problems'])}\n"
                f"    kept: complete files {resume['complete_bytes']:,} + resumed partial files "
                f"{resume['resumed_bytes']:,} = {resume['kept']:,} bytes\n"
                f"    missing (size - kept): {resume['missing']:,} bytes (size - on disk: {resume['missing_by_disk']:,})\n"
                f"    re-fetched (nginx + Hub bodies): {resume['refetched']:,} bytes in {resume['cdn_requests']} CDN "
                f"requests: {over:+,} bytes against the missing ones ({over / total:+.2%} of the model)")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ main

def run_xet(args, work: Path, model: Path, began: float, load_before: float) -> int:
    """--xet: the Xet scenario (bench/xet_bench.py) on the model just made."""
    sys.modules.setdefault("download_bench", sys.modules[__name__])   # xet_bench's `import download_bench`: this one
    import xet_bench   # noqa: PLC0415 (it builds on this module: imported only here)
    removed = xet_bench.remove_empty_files(model)
    expected = expected_files(model)
    build_launcher(work)
    data = xet_bench.run(args, work, model, expected)
    print(f"\ndownload benchmark, Xet scenario: {args.hfget}, {os.cpu_count()} CPUs{cpu_split()}, 1-minute load "
          f"average at the start {load_before:.2f}, at the end {os.getloadavg()[0]:.2f}"
          + (f"; left out of the model (empty): {', '.join(removed)}" if removed else ""))
    print(xet_bench.report(data))
    print(f"\ntotal benchmark time {time.monotonic() - began:.0f}s")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(xet_bench.json_data(data), indent=2, default=str) + "\n")
    failed = [r for r in data["results"] if r.wall is not None and not r.ok and r.tool.startswith("hfget")]
    resume = data["resume"]
    return 1 if failed or (resume and not resume.get("ok", True)) else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=parse_size, default=parse_size("2GiB"),
                        help="total bytes of the shards (default 2GiB; e.g. 512MiB for a quick run)")
    parser.add_argument("--shards", type=int, default=64)
    parser.add_argument("--rate-cap", default="8m,40m",
                        help="nginx limit_rate per connection, a comma list: one scenario capped-RATE each (default "
                             "8m,40m; k/m = KiB/MiB per second)")
    parser.add_argument("--connection-sweep", default="", metavar="N,N,...",
                        help="also run hfget with fixed --connections N as tools hfget-cN (e.g. 16,32,64,128)")
    parser.add_argument("--max-speed-rates", default="", metavar="R,R,...",
                        help="in the unlimited scenario, also run hfget --max-speed R for each (e.g. 10M,100M,1G) and "
                             "report achieved vs asked")
    parser.add_argument("--max-speed-seconds", type=float, default=14.0,
                        help="each --max-speed run is cut after this many seconds (default 14)")
    parser.add_argument("--ceiling", type=int, default=None,
                        help="the connection ceiling for the 8m target (default: --max-connections's default from "
                             "hfget download --help)")
    parser.add_argument("--work", metavar="DIR", help="make the model and the targets under DIR (e.g. /dev/shm for "
                        "tmpfs; default: the system's temp dir)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tool and scenario, round-robin; the median "
                        "is shown (default 3)")
    parser.add_argument("--repeat-limit", type=float, default=20.0,
                        help="a tool whose first run took longer than this many seconds runs once (default 20)")
    parser.add_argument("--hfget", default=str(ROOT / "build" / "hfget"))
    parser.add_argument("--hfget-baseline", metavar="PATH",
                        help=f"also run this hfget binary (e.g. a build of main) with the default flags as tool "
                             f"{BASELINE}, and compare it with --hfget: median wall ratio, request counts")
    parser.add_argument("--tools", default=",".join(DEFAULT_TOOLS),
                        help=f"comma-separated, from {','.join(ALL_TOOLS)} (default {','.join(DEFAULT_TOOLS)})")
    parser.add_argument("--scenarios", default=",".join(ALL_SCENARIOS))
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=FLAGS",
                        help="also run hfget with these extra flags as tool hfget-NAME, e.g. c8=\"--chunk-size 8MiB\"")
    parser.add_argument("--idle-wait", type=float, default=30.0,
                        help="before each run, wait up to this many seconds for the machine to be idle (default 30; "
                             "0: do not wait)")
    parser.add_argument("--nginx-workers", type=int, default=1, help="nginx worker processes (default 1)")
    parser.add_argument("--server-cpus", metavar="LIST",
                        help="run nginx and the Hub emulator on these CPUs (e.g. 0-3) and each tool on the others, "
                             "as when the servers are other machines (default: all share every CPU)")
    parser.add_argument("--emulator-cpus", metavar="LIST",
                        help="with --server-cpus: the Hub emulator (and its Xet CAS) on these CPUs instead, apart "
                             "from nginx, as the Hub and its CAS are other machines than the CDN's; the tools run "
                             "on the CPUs neither list names")
    parser.add_argument("--kill-at", type=float, default=0.5, help="fraction of bytes on disk at the kill -9")
    parser.add_argument("--no-extras", action="store_true", help="skip hfget's no-op re-run and resume test")
    parser.add_argument("--json-out", help="also write the results as JSON here")
    parser.add_argument("--xet", action="store_true", help="run the Xet scenario only (bench/xet_bench.py)")
    parser.add_argument("--xet-tools", default="", help="with --xet: comma-separated, from "
                        "hfget,hfget-bridge,js-xetblob,hf (default all)")
    parser.add_argument("--xet-store", metavar="DIR", help="with --xet: keep the Xet store in DIR; a DIR holding an "
                        "earlier upload of this model is served again with no upload (no node needed)")
    parser.add_argument("--xet-rate-cap", metavar="RATE", help="with --xet: nginx limit_rate per connection on the "
                        "xorbs and the bridge's bodies alike (e.g. 65m, a fast CDN edge's ~68 MB/s)")
    parser.add_argument("--xet-cas-latency", type=float, default=0.0, metavar="MS",
                        help="with --xet: the emulator's CAS answers each request MS milliseconds late, as the Hub's "
                        "CAS across the internet would (tens of ms); the xorbs and the bridge stay local")
    parser.add_argument("--xet-hub-latency", type=float, default=0.0, metavar="MS",
                        help="with --xet: the emulator's Hub (API, resolve, Xet token) answers each request MS "
                        "milliseconds late, as the Hub across the internet would: the bridge's resolve pays it too")
    args = parser.parse_args()
    tools = [t for t in args.tools.split(",") if t]
    try:
        caps = {f"capped-{c.strip()}": parse_rate(c) for c in args.rate_cap.split(",") if c.strip()}
        if args.xet_rate_cap:
            parse_rate(args.xet_rate_cap)
        speeds = [r.strip() for r in args.max_speed_rates.split(",") if r.strip()]
        [parse_rate(r) for r in speeds]
        sweep = [int(n) for n in args.connection_sweep.split(",") if n.strip()]
        global SERVER_CPUS, EMULATOR_CPUS
        SERVER_CPUS = parse_cpu_list(args.server_cpus) if args.server_cpus else None
        if args.emulator_cpus:
            if not SERVER_CPUS:
                raise ValueError("--emulator-cpus needs --server-cpus (nginx's CPUs)")
            EMULATOR_CPUS = parse_cpu_list(args.emulator_cpus)
            if EMULATOR_CPUS & SERVER_CPUS or not client_cpus():
                raise ValueError(f"--emulator-cpus {args.emulator_cpus}: must not overlap --server-cpus and must "
                                 "leave CPUs for the tools")
    except ValueError as error:
        parser.error(str(error))
    scenarios = []
    for name in (s for s in args.scenarios.split(",") if s):
        for scenario in (list(caps) if name == "capped" else [name]):
            if scenario.startswith("capped-") and scenario not in caps:
                caps[scenario] = parse_rate(scenario.removeprefix("capped-"))
            if scenario not in scenarios:
                scenarios.append(scenario)
    args.variants = {f"hfget-c{n}": ["--connections", str(n)] for n in sweep if n != 32 or "hfget-c32" not in tools}
    for spec in args.variant:
        name, _, flags = spec.partition("=")
        if not name or not flags.strip():
            parser.error(f"--variant wants NAME=FLAGS, got {spec!r}")
        args.variants[f"hfget-{name}"] = flags.split()
    tools += [t for t in args.variants if t not in tools]
    if args.hfget_baseline:
        args.hfget_baseline = str(Path(args.hfget_baseline).resolve())
        if not os.access(args.hfget_baseline, os.X_OK):
            parser.error(f"no hfget binary at {args.hfget_baseline} (--hfget-baseline)")
        if "hfget" not in tools:
            tools.insert(0, "hfget")
        if BASELINE not in tools:
            tools.insert(tools.index("hfget") + 1, BASELINE)
    if unknown := ([t for t in tools if t not in ALL_TOOLS and t not in args.variants
                    and not (t == BASELINE and args.hfget_baseline)]
                   + [s for s in scenarios if s != "unlimited" and s not in caps]):
        parser.error(f"unknown tool or scenario: {', '.join(unknown)}")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    args.hfget = str(Path(args.hfget).resolve())
    if not os.access(args.hfget, os.X_OK):
        parser.error(f"no hfget binary at {args.hfget} (build it, or give --hfget)")
    os.environ["HFGET_BIN"] = args.hfget

    began = time.monotonic()
    load_before = os.getloadavg()[0]
    if args.work:
        Path(args.work).mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="hfget-bench-download-", dir=args.work))
    try:
        model = work / "model"
        print(f"generating a {args.shards}-shard model of {args.size / GIB:.2f} GiB ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, str(ROOT / "tests/fixtures/make_model.py"), str(model), "--shards",
                        str(args.shards), "--shard-size", str(args.size // args.shards)], check=True,
                       stdout=subprocess.DEVNULL, timeout=1800)
        if args.xet:
            return run_xet(args, work, model, began, load_before)
        expected = expected_files(model)
        build_launcher(work)
        bench = Bench(args, work, expected)
        results: list[Result] = []
        resume = None
        raw: dict[str, dict] = {}
        speed_rows: list[dict] = []
        resume_in = next((s for s in reversed(scenarios) if s in caps), None)
        for scenario in scenarios:
            limit = scenario.removeprefix("capped-") if scenario in caps else None
            with harness.Hub({REPO: model}, limit_rate=limit, nginx_workers=args.nginx_workers) as hub:
                runs: dict[str, list[Result]] = {}
                for tool in tools:
                    if why := bench.unavailable(tool):
                        print(f"[{scenario}] {tool}: skipped: {why}", file=sys.stderr, flush=True)
                        results.append(Result(scenario, tool, note=why if why.startswith("n/a") else f"skipped: {why}"))
                for repeat in range(args.repeat):
                    for tool in tools:
                        if bench.unavailable(tool):
                            continue
                        earlier = runs.get(tool, [])
                        if earlier and (not earlier[0].ok or earlier[0].wall > args.repeat_limit):
                            continue   # slow (link-bound) or failing: once is enough
                        runs.setdefault(tool, []).append(bench.run_tool(scenario, tool, hub, repeat))
                results += [median_result(runs[tool]) for tool in tools if tool in runs]
                if shutil.which("curl"):
                    print(f"[{scenario}] raw limits: one curl of the largest blob ...", file=sys.stderr, flush=True)
                    raw[scenario] = bench.raw_limits(hub)
                if scenario == "unlimited":
                    speed_rows = [bench.max_speed(hub, rate) for rate in speeds]
                if scenario == resume_in and not args.no_extras and "hfget" in tools:
                    print(f"[{scenario}] hfget kill -9 and resume ...", file=sys.stderr, flush=True)
                    resume = bench.resume(hub)
                    resume["scenario"] = scenario
        order = {tool: i for i, tool in enumerate(tools)}
        results.sort(key=lambda r: (scenarios.index(r.scenario), order[r.tool]))

        titles = {"unlimited": "scenario unlimited (loopback, no rate limit)"}
        titles.update({s: f"scenario {s} (nginx limit_rate {s.removeprefix('capped-')} per connection)" for s in caps})
        fixed = {t: n for t in tools if t.startswith("hfget") and t != BASELINE
                 and (n := bench.fixed_connections(t)) is not None}
        ceiling = args.ceiling or bench.ceiling
        unlimited_rate = rate_of(next((r for r in results if r.scenario == "unlimited" and r.tool == "hfget"), None),
                                 bench.total)
        targets = {s: target_lines(s, caps.get(s), results, bench.total, fixed, ceiling, unlimited_rate)
                   for s in scenarios}
        print(f"\ndownload benchmark: {args.hfget}"
              + (f" against {BASELINE} {args.hfget_baseline}" if args.hfget_baseline else "")
              + f", {os.cpu_count()} CPUs{cpu_split()}, 1-minute load average at the start "
              f"{load_before:.2f}, at the end {os.getloadavg()[0]:.2f}")
        for scenario in scenarios:
            print(table(scenario, results, bench.total, len(expected), titles[scenario]))
            if limits := raw.get(scenario):
                hfget = next((r for r in results if r.scenario == scenario and r.tool == "hfget" and r.wall), None)
                share = (f"; hfget's {bench.total / hfget.wall / 1e6:.0f} MB/s is "
                         f"{bench.total / hfget.wall / 1e6 / limits['file_mbps']:.0%} of the to-file rate") if hfget else ""
                print(f"raw limits: one curl of the largest blob ({limits['file']}, {limits['bytes']:,} bytes, median of "
                      f"5): to /dev/null {limits['null_mbps']:.0f} MB/s, to a file {limits['file_mbps']:.0f} MB/s{share}")
            print("\n".join(targets[scenario]))
        if speed_rows:
            print("\n".join(max_speed_lines(speed_rows, unlimited_rate)))
        print(f"\nconns: hfget's final connection count (the last `connections` JSON event; a fixed variant's N when "
              f"it sends none); anon/file MiB: peak RssAnon / RssFile of the largest process, sampled every 100 ms "
              f"(issue 17's target: anon <= 64 MiB); ceiling for the 8m target: {ceiling or 'unknown'}")
        print("\nsrv CPU: nginx + Hub emulator CPU seconds during the run; other: CPU seconds anything else on the "
              "machine used meanwhile (well above 0 means the run shared its 2 cores with someone else's work)")
        print(report_extras(results, resume, bench.total))
        comparisons = [c for c in (baseline_comparison(s, results) for s in scenarios) if c]
        if comparisons:
            print("")
            for compared in comparisons:
                print(format_comparison(compared))
        print(f"\ntotal benchmark time {time.monotonic() - began:.0f}s")
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(
                {"total_bytes": bench.total, "files": len(expected), "rate_cap": args.rate_cap,
                 "scenarios": scenarios, "targets": targets, "max_speed": speed_rows, "ceiling": ceiling,
                 "repeat": args.repeat, "results": [r.__dict__ for r in results], "resume": resume, "raw_limits": raw,
                 "baseline": args.hfget_baseline, "baseline_comparison": comparisons},
                indent=2, default=str) + "\n")
        failed = [r for r in results if r.wall is not None and not r.ok and r.tool.startswith("hfget")]
        return 1 if failed or (resume and not resume.get("ok", True)) else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
