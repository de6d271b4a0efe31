#!/usr/bin/env python3
"""Benchmark hfget on a repo of many small files (a dataset's shape), where per-file costs add up.

    python3 bench/many_files_bench.py [--files 8000] [--hfget build/hfget [--hfget OTHER_BUILD ...]]

It writes a repo of --files small JSON files in one folder (plus a README), serves it with the bundled Hub
emulator on loopback, and times, for each hfget build given: a download into the HF cache, a download into
a local dir, then a no-op re-run of each (everything already there). Each result is checked complete. The
small files are not LFS files, so every one is a request to the (single-threaded, Python) emulator, whose
speed bounds the downloads; what this benchmark shows is how hfget's own per-file work grows with the
number of files (listing folders, choosing ranges, writing metadata). Everything runs on 127.0.0.1 and is
cleaned up.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "integration"))

import harness  # noqa: E402


def write_repo(root: Path, count: int) -> None:
    (root / "data").mkdir(parents=True)
    (root / "README.md").write_text("# many small files\n")
    for i in range(count):
        (root / "data" / f"part-{i:06d}.json").write_text(json.dumps({"row": i, "pad": "x" * (i % 97)}))


def count_files(root: Path, skip_metadata: bool) -> int:
    """Files (or cache symlinks) under root; in a local dir, not its .cache/huggingface metadata."""
    return sum(1 for p in root.rglob("*") if (p.is_file() or p.is_symlink())
               and not (skip_metadata and ".cache" in p.relative_to(root).parts))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=8000, help="small files in the repo (default 8000)")
    parser.add_argument("--hfget", action="append", help="an hfget binary; repeat to compare builds "
                        "(default build/hfget)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds allowed per hfget run")
    args = parser.parse_args()
    binaries = [str(Path(b).resolve()) for b in (args.hfget or [str(ROOT / "build" / "hfget")])]

    work = Path(tempfile.mkdtemp(prefix="hfget-bench-many-"))
    try:
        repo = work / "repo"
        write_repo(repo, args.files)
        expected = args.files + 1
        rows: list[tuple[str, str, float, bool]] = []
        with harness.Hub({"bench/many": repo}) as hub:
            for index, binary in enumerate(binaries):
                label = f"hfget #{index + 1}" if len(binaries) > 1 else "hfget"
                os.environ["HFGET_BIN"] = binary
                home = work / f"home-{index}"
                local = work / f"local-{index}"
                for case, extra in (("cache", []), ("local dir", ["--local-dir", str(local)])):
                    for run in ("download", "no-op re-run"):
                        result = hub.run_hfget(["download", "bench/many", *extra, "-q"], home=home,
                                               timeout=args.timeout)
                        if case == "cache":
                            snapshots = home / ".cache" / "huggingface" / "hub" / "models--bench--many" / "snapshots"
                            present = sum(count_files(s, False) for s in snapshots.iterdir()) if snapshots.is_dir() else 0
                        else:
                            present = count_files(local, True)
                        ok = result.code == 0 and present == expected
                        if not ok:
                            print(f"{label} {case} {run}: exit {result.code}, {present}/{expected} files\n"
                                  f"{result.stderr[-2000:]}", file=sys.stderr)
                        rows.append((label, f"{case}, {run}", result.elapsed, ok))
                # The repo has no config or tokenizer: those two checks are waived, the rest apply.
                result = hub.run_hfget(["verify", str(local), "--allow-missing", "config", "--allow-missing",
                                        "tokenizer"], home=home, timeout=args.timeout)
                if result.code != 0:
                    print(f"{label} verify: exit {result.code}\n{result.stderr[-2000:]}", file=sys.stderr)
                rows.append((label, "local dir, verify", result.elapsed, result.code == 0))
        print(f"\nmany-files benchmark: {expected} files ({args.files} small JSON files in one folder + README)")
        for index, binary in enumerate(binaries):
            print(f"  hfget #{index + 1}: {binary}" if len(binaries) > 1 else f"  hfget: {binary}")
        print()
        print(f"{'build':<12} {'case':<26} {'wall s':>8} {'files/s':>9}  check")
        for label, case, seconds, ok in rows:
            print(f"{label:<12} {case:<26} {seconds:>8.2f} {expected / seconds:>9.0f}  {'ok' if ok else 'FAILED'}")
        return 0 if all(ok for *_, ok in rows) else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
