#!/usr/bin/env python3
"""Benchmark `hfget verify` against `sha256sum` run in parallel over the same files, and against the
machine's ceiling (N cores x `openssl speed sha256`).

    python3 bench/verify_bench.py [--size 2GiB] [--shards 16] [--jobs N] [--runs 3] [--hfget build/hfget]

It generates a synthetic sharded model, serves it with the bundled Hub emulator + nginx on loopback,
downloads it with hfget into a local dir (which records the listing verify checks against), then times:
  * warm page cache: hfget verify --jobs N, sha256sum over the same files with xargs -P N;
  * cold (only when the page cache can be dropped, i.e. as root): both again after drop_caches, and the
    disk's read speed (the same files read by `cat`, as many at a time, into /dev/null).
Each is timed --runs times, alternating the tools; the table shows the median and the spread of hfget's runs.
Prints one table with throughputs and ratios. Everything runs on 127.0.0.1 and is cleaned up.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))

import harness  # noqa: E402
from make_model import parse_size  # noqa: E402


def openssl_sha256_bytes_per_second(processes: int = 1) -> float:
    """SHA-256 bytes per second: of one core, or of `processes` hashing at once (openssl speed -multi)."""
    multi = ["-multi", str(processes)] if processes > 1 else []
    out = subprocess.run(["openssl", "speed", *multi, "-evp", "sha256", "-seconds", "1", "-bytes", "16384"],
                         capture_output=True, text=True, check=True).stdout
    match = re.search(r"^sha256\s+([\d.]+)k", out, re.MULTILINE)
    return float(match.group(1)) * 1000 if match else 0.0


def drop_caches() -> bool:
    try:
        subprocess.run(["sync"], check=True)
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def warm(files: list[Path]) -> None:
    for path in files:
        with open(path, "rb") as f:
            while f.read(8 << 20):
                pass


def timed(argv: list[str], **kwargs) -> float:
    started = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, **kwargs)
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=parse_size, default=parse_size("2GiB"), help="total shard bytes (default 2GiB)")
    parser.add_argument("--shards", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--runs", type=int, default=3, help="timings per tool and cache state; the median is shown")
    parser.add_argument("--hfget", default=str(ROOT / "build" / "hfget"))
    args = parser.parse_args()
    os.environ["HFGET_BIN"] = str(Path(args.hfget).resolve())

    work = Path(tempfile.mkdtemp(prefix="hfget-bench-verify-"))
    try:
        model = work / "model"
        subprocess.run([sys.executable, str(ROOT / "tests/fixtures/make_model.py"), str(model), "--shards",
                        str(args.shards), "--shard-size", str(args.size // args.shards)], check=True,
                       stdout=subprocess.DEVNULL)
        target = work / "download"
        with harness.Hub({"bench/model": model}) as hub:
            result = hub.run_hfget(["download", "bench/model", "--local-dir", target, "-q"], timeout=3600)
            if result.code != 0:
                print(result.stderr, file=sys.stderr)
                return 1
        files = sorted(p for p in target.rglob("*") if p.is_file() and ".cache" not in p.parts)
        total = sum(p.stat().st_size for p in files)
        ceiling = openssl_sha256_bytes_per_second() * args.jobs
        # N x one core is what the target is written against; N processes hashing at once is what the
        # machine gives: vCPUs that are hyperthreads share one core's SHA unit, so the two differ there.
        parallel = openssl_sha256_bytes_per_second(args.jobs)

        def prepare(mode: str) -> None:
            if mode == "warm":
                warm(files)
            else:
                drop_caches()

        file_list = b"\0".join(str(p).encode() for p in files)
        read_runs: list[float] = []  # the disk's read speed: the same files read cold, as many at a time, hashed by no one
        rows = []
        for mode in ("warm", "cold"):
            if mode == "cold" and not drop_caches():
                rows.append((mode, None, None))
                continue
            hfget_runs, sha_runs = [], []
            for _ in range(max(1, args.runs)):
                prepare(mode)
                hfget_runs.append(timed([args.hfget, "verify", str(target), "--jobs", str(args.jobs)]))
                prepare(mode)
                sha_runs.append(timed(["xargs", "-0", "-P", str(args.jobs), "-n", "1", "sha256sum"], input=file_list))
                if mode == "cold":
                    prepare(mode)
                    read_runs.append(timed(["xargs", "-0", "-P", str(args.jobs), "-n", "1", "cat"], input=file_list))
            rows.append((mode, hfget_runs, sha_runs))

        gb = total / 1e9
        print(f"\nverify benchmark: {len(files)} files, {gb:.2f} GB ({total / 2**30:.2f} GiB), jobs={args.jobs}")
        print(f"ceiling: {args.jobs} x openssl speed sha256 = {ceiling / 1e9:.2f} GB/s; "
              f"openssl speed -multi {args.jobs} (all at once) = {parallel / 1e9:.2f} GB/s "
              f"({parallel / ceiling:.0%} of it)\n")
        print(f"{'cache':<6} {'hfget verify':>14} {'sha256sum -P':>14} {'hfget/sha256sum':>16} {'hfget/ceiling':>14}"
              "  hfget runs/ceiling")
        for mode, hfget_runs, sha_runs in rows:
            if hfget_runs is None:
                print(f"{mode:<6} {'(cannot drop the page cache here)':>62}")
                continue
            hfget_rate, sha_rate = total / statistics.median(hfget_runs), total / statistics.median(sha_runs)
            spread = " ".join(f"{total / seconds / ceiling:.0%}" for seconds in hfget_runs)
            print(f"{mode:<6} {hfget_rate / 1e9:>10.2f} GB/s {sha_rate / 1e9:>10.2f} GB/s {hfget_rate / sha_rate:>15.2f}x"
                  f" {hfget_rate / ceiling:>13.0%}  {spread}")
        for mode, hfget_runs, _ in rows:
            if hfget_runs is not None:
                print(f"{mode:<6} hfget verify = {total / statistics.median(hfget_runs) / parallel:.0%}"
                      f" of openssl speed -multi {args.jobs}")
        if read_runs:
            read_rate = total / statistics.median(read_runs)
            cold_hfget = next(total / statistics.median(r[1]) for r in rows if r[0] == "cold")
            print(f"\ndisk read, cold (xargs -P {args.jobs} cat > /dev/null): {read_rate / 1e9:.2f} GB/s;"
                  f" hfget verify cold = {cold_hfget / read_rate:.0%} of it")
        print(f"\n(median of {max(1, args.runs)} runs each. hfget verify also checks sizes, shard set, safetensors"
              " headers, config and tokenizer; sha256sum only hashes.)")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
