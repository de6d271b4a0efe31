#!/usr/bin/env python3
"""Soak: hundreds of seeded, fault-injected downloads; every one must end byte-correct, none may give up.

    python3 bench/soak.py [--runs 200] [--matrix-runs 20] [--seed 1] [--hfget build/hfget] [--json-out F]

Three parts, each run seeded (the same seed gives the same faults for the same request order):

1. the corrupt matrix: a 16 x 8 MiB repo, 10 % of body GETs (CDN and Hub) with one byte flipped at a random
   place, --matrix-runs runs;
2. mixed faults: the same repo, 25 faults of every kind in all per run (drops, 500/503, 429 with
   Retry-After or RateLimit, stalls, flipped bytes, expired signed URLs), --matrix-runs runs;
3. the soak: --runs downloads of a smaller repo (both layouts in turn) with every fault kind at once, each
   at its own seeded probability, and in one run of three a kill -9 at a seeded random moment followed by
   a resume under the same faults.

Counted: corrupt outputs (a file under its final name whose bytes differ from the source: must be 0) and
give-ups (a run that exited non-zero although every fault is transient: must be 0), plus exit codes, faults
injected by kind, kills, files fetched again after a hash mismatch, and time. The Hub emulator serves the
bodies itself (its CDN), since nginx cannot inject faults. Bounded: every hfget run has a timeout, and the
soak stops after --budget seconds (default 1200) with what it has. Everything runs on 127.0.0.1 and is
removed at the end.
"""
from __future__ import annotations

import argparse
import json
import random
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))

import harness  # noqa: E402
from make_model import make_model  # noqa: E402
from test_soak import corrupt_published, json_events, refetch_events  # noqa: E402

KIB = 1024
MIB = 1024 * KIB


def matrix_flips(seed: int) -> list[dict]:
    return [{"path": "*", "kind": "flip", "offset": -1, "probability": 0.1, "times": -1, "seed": seed}]


def matrix_mixed(seed: int) -> list[dict]:
    """25 faults in all, of every kind; each rule fires at most `times` times, on a seeded draw."""
    rules = [
        ({"kind": "drop", "after_bytes": 300 * KIB}, 5),
        ({"kind": "status", "status": 500}, 3),
        ({"kind": "status", "status": 503}, 3),
        ({"kind": "status", "status": 429, "retry_after": 1}, 2),
        ({"kind": "status", "status": 429, "target": "resolve", "ratelimit_reset": 1}, 2),
        ({"kind": "status", "status": 503, "target": "resolve"}, 2),
        ({"kind": "stall", "after_bytes": 100 * KIB, "seconds": 4}, 2),
        ({"kind": "flip", "offset": -1}, 4),
        ({"kind": "expire"}, 2),
    ]
    assert sum(times for _, times in rules) == 25
    return [{"path": "*", **rule, "times": times, "probability": 0.15, "seed": seed * 100 + index}
            for index, (rule, times) in enumerate(rules)]


def soak_faults(seed: int) -> list[dict]:
    rules = [
        {"kind": "status", "status": 503, "target": "resolve", "probability": 0.04},
        {"kind": "status", "status": 429, "target": "resolve", "ratelimit_reset": 1, "probability": 0.01},
        {"kind": "drop", "after_bytes": 40000, "probability": 0.08},
        {"kind": "status", "status": 500, "probability": 0.04},
        {"kind": "status", "status": 503, "probability": 0.04},
        {"kind": "status", "status": 429, "retry_after": 1, "probability": 0.03},
        {"kind": "stall", "after_bytes": 20000, "seconds": 4, "probability": 0.01},
        {"kind": "flip", "offset": -1, "probability": 0.08},
        {"kind": "expire", "probability": 0.2},
    ]
    return [{"path": "*", **rule, "times": -1, "seed": seed * 100 + index} for index, rule in enumerate(rules)]


class Soak:
    def __init__(self, hub: harness.Hub, binary: str, sources: dict[str, Path], timeout: float) -> None:
        self.hub, self.binary, self.timeout = hub, binary, timeout
        self.sources = sources
        self.files = {repo: harness.source_files(path) for repo, path in sources.items()}
        self.totals: Counter = Counter()
        self.faults: Counter = Counter()
        self.exits: Counter = Counter()
        self.problems: list[str] = []

    def one(self, label: str, repo: str, layout: str, faults: list[dict], args: list[str],
            kill_after: float | None = None) -> None:
        home, target = self.hub.new_dir("home"), self.hub.new_dir(layout)
        argv = ["download", repo, "--local-dir" if layout == "local" else "--cache-dir", str(target), *args]
        before = self.hub.stats()["faults_injected"]
        self.hub.set_faults(faults)
        try:
            if kill_after is not None:
                running = self.hub.start_hfget(argv, home=home)
                time.sleep(kill_after)
                if running.process.poll() is None:
                    running.kill()
                    running.wait(timeout=30)
                    self.totals["killed"] += 1
                    bad = corrupt_published(target, layout, repo, self.files[repo])
                    self.totals["corrupt_outputs"] += len(bad)
                    self.problems += [f"{label} after kill -9: {b}" for b in bad]
                else:
                    running.wait(timeout=30)
                    self.totals["finished_before_their_kill"] += 1
            result = self.hub.run_hfget(argv, home=home, timeout=self.timeout)
        finally:
            self.hub.clear_faults()
        after = self.hub.stats()["faults_injected"]
        self.faults.update({kind: after[kind] - before[kind] for kind in after if after[kind] > before[kind]})
        self.totals["runs"] += 1
        self.exits[result.code] += 1
        self.totals["files_refetched_after_a_mismatch"] += len(refetch_events(json_events(result.stderr)))
        bad = corrupt_published(target, layout, repo, self.files[repo])
        self.totals["corrupt_outputs"] += len(bad)
        self.problems += [f"{label}: {b}" for b in bad]
        if result.code != 0:
            self.totals["give_ups"] += 1
            errors = [e.get("message") for e in json_events(result.stderr) if e.get("event") == "error"]
            self.problems.append(f"{label}: exit {result.code}: {errors[:2] or result.stderr[-400:]}")
        else:
            expected = sorted(self.files[repo])
            if layout == "local":
                present = sorted(p for p in self.files[repo] if (target / p).is_file())
            else:
                snapshot = target / f"models--{repo.replace('/', '--')}" / "snapshots"
                present = sorted(p for p in self.files[repo] if any((s / p).is_file() for s in snapshot.iterdir()))
            if present != expected:
                self.totals["incomplete_after_exit_0"] += 1
                self.problems.append(f"{label}: exit 0 but missing {sorted(set(expected) - set(present))}")
        shutil.rmtree(target, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200, help="soak runs (part 3; default 200)")
    parser.add_argument("--matrix-runs", type=int, default=20, help="runs of each matrix scenario (default 20)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hfget", default=str(ROOT / "build" / "hfget"))
    parser.add_argument("--timeout", type=float, default=180, help="seconds allowed per hfget run")
    parser.add_argument("--budget", type=float, default=1200, help="seconds for the whole soak (then it stops)")
    parser.add_argument("--json-out", help="write the figures as JSON here too")
    args = parser.parse_args()
    os.environ["HFGET_BIN"] = str(Path(args.hfget).resolve())

    work = Path(tempfile.mkdtemp(prefix="hfget-soak-"))
    started = time.monotonic()
    figures: dict = {}
    try:
        big, small = work / "big", work / "small"
        make_model(big, shards=16, shard_size=8 * MIB, seed=args.seed)
        make_model(small, shards=6, shard_size=512 * KIB, seed=args.seed + 1)
        repos = {"soak/matrix": big, "soak/small": small}
        with harness.Hub(repos, cdn="emulator") as hub:
            parts = []
            rng = random.Random(args.seed)

            def part(name: str, count: int, run_one) -> None:
                soak = Soak(hub, args.hfget, repos, args.timeout)
                part_started = time.monotonic()
                for run in range(count):
                    if time.monotonic() - started > args.budget:
                        soak.totals["stopped_by_budget"] = 1
                        break
                    run_one(soak, run)
                figures[name] = {**soak.totals, "exit_codes": {str(k): v for k, v in soak.exits.items()},
                                 "faults_injected": dict(soak.faults),
                                 "seconds": round(time.monotonic() - part_started, 1), "problems": soak.problems}
                parts.append(name)
                print(f"[{name}] " + json.dumps(figures[name], sort_keys=True), flush=True)

            matrix_args = ["--connections", "8", "--retries", "8", "--stall-timeout", "2", "--progress", "json"]
            part("corrupt matrix (16 x 8 MiB, 10 % of GETs flipped)", args.matrix_runs,
                 lambda soak, run: soak.one(f"flip run {run}", "soak/matrix", "cache" if run % 2 else "local",
                                            matrix_flips(args.seed * 1000 + run), matrix_args))
            part("mixed faults (16 x 8 MiB, 25 faults a run)", args.matrix_runs,
                 lambda soak, run: soak.one(f"mixed run {run}", "soak/matrix", "cache" if run % 2 else "local",
                                            matrix_mixed(args.seed * 1000 + run), matrix_args))
            soak_args = ["--chunk-size", "256KiB", "--connections", "4", "--retries", "8", "--stall-timeout", "2",
                         "--progress", "json"]
            part("soak (every fault at once, kill -9 in one run of three)", args.runs,
                 lambda soak, run: soak.one(f"soak run {run}", "soak/small", "cache" if run % 2 else "local",
                                            soak_faults(args.seed * 1000 + run), soak_args,
                                            kill_after=rng.uniform(0.1, 1.0) if run % 3 == 0 else None))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    figures["total_seconds"] = round(time.monotonic() - started, 1)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    bad = sum(f.get("corrupt_outputs", 0) + f.get("give_ups", 0) + f.get("incomplete_after_exit_0", 0)
              for f in figures.values() if isinstance(f, dict))
    truncated = [name for name, f in figures.items() if isinstance(f, dict) and f.get("stopped_by_budget")]
    print(f"total: {figures['total_seconds']} s; corrupt outputs + give-ups + incomplete: {bad}")
    if truncated:  # fewer runs than asked for is not the figure the docs quote: say so, and fail
        print(f"stopped by --budget before every run was done: {', '.join(truncated)}")
    return 0 if bad == 0 and not truncated else 1


if __name__ == "__main__":
    sys.exit(main())
