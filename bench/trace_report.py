#!/usr/bin/env python3
"""Where a benchmark run's wall time went, from the traces download_bench.py writes with HFGET_BENCH_TRACE=DIR.

    HFGET_BENCH_TRACE=DIR python3 bench/download_bench.py --xet ...   # then
    python3 bench/trace_report.py DIR

For each run (NAME.run.json, NAME.emulator.json, NAME.nginx.log), in seconds from the tool's start: when the
emulator first answered and when nginx began its first body, how long the emulator's answers took in all
(reconstructions apart), how busy nginx's connections were (the time between one body's end and the next
body's start on a connection is a connection waiting: for Xet, mostly for a reconstruction), and the tail:
how long the last bodies ran after the first connection went idle for good.
"""
from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


SMALL_BODY = 1 << 20


def nginx_requests(path: Path) -> list[dict]:
    requests = []
    for line in path.read_text(errors="replace").splitlines():
        fields = line.split(" ", 6)
        if len(fields) < 7:
            continue
        end, seconds = float(fields[0]), float(fields[1])
        asked = None  # the length the Range asked for ("bytes=A-B"), when it names both ends
        range_text = fields[6].strip('"')
        if range_text.startswith("bytes=") and "-" in range_text and "," not in range_text:
            first, _, last = range_text[6:].partition("-")
            if first.isdigit() and last.isdigit():
                asked = int(last) - int(first) + 1
        requests.append({"start": end - seconds, "end": end, "connection": int(fields[2]), "status": int(fields[3]),
                         "bytes": int(fields[4]), "uri": fields[5], "asked": asked})
    return requests


def report(trace_dir: Path, name: str) -> str:
    run = json.loads((trace_dir / f"{name}.run.json").read_text())
    t0, wall = run["started"], run["wall"]
    emulator = json.loads((trace_dir / f"{name}.emulator.json").read_text())
    nginx_path = trace_dir / f"{name}.nginx.log"
    bodies = [r for r in nginx_requests(nginx_path) if r["bytes"] > 0] if nginx_path.exists() else []
    lines = [f"{name}: wall {wall:.3f} s, CPU {run['cpu']:.2f} s, servers' CPU {run['servers_cpu']:.2f} s"]
    if emulator:
        first = min(r["time"] for r in emulator) - t0
        kinds: dict[str, list[float]] = defaultdict(list)
        for r in emulator:
            kind = ("reconstruction" if "/reconstructions/" in r["path"] else "token" if "xet-read-token" in r["path"]
                    else "resolve" if "/resolve/" in r["path"] else "api" if r["path"].startswith("/api/") else "other")
            kinds[kind].append(r.get("seconds", 0.0))
        parts = ", ".join(f"{k} {len(v)} x {sum(v) / len(v) * 1000:.1f} ms (max {max(v) * 1000:.1f})"
                          for k, v in sorted(kinds.items()))
        lines.append(f"  emulator: first request at {first:.3f} s; {parts}")
    if not bodies:
        return "\n".join(lines)
    first_body = min(r["start"] for r in bodies) - t0
    last_end = max(r["end"] for r in bodies) - t0
    by_connection: dict[int, list[dict]] = defaultdict(list)
    for r in bodies:
        by_connection[r["connection"]].append(r)
    busy = waiting = 0.0
    idle_for_good = []
    # The wait before each body on its connection, by the size of the body before and of the one after: over
    # Xet a file's first range often starts with a small body (its first chunk in a xorb of its own).
    gaps: dict[str, list[float]] = defaultdict(list)
    for requests in by_connection.values():
        requests.sort(key=lambda r: r["start"])
        busy += sum(r["end"] - r["start"] for r in requests)
        waiting += sum(max(0.0, b["start"] - a["end"]) for a, b in zip(requests, requests[1:]))
        idle_for_good.append(requests[-1]["end"] - t0)
        for a, b in zip(requests, requests[1:]):
            kind = ("small" if a["bytes"] < SMALL_BODY else "large") + " → " + (
                "small" if b["bytes"] < SMALL_BODY else "large")
            gaps[kind].append(max(0.0, b["start"] - a["end"]))
    first_idle = min(idle_for_good)
    total = sum(r["bytes"] for r in bodies)
    lines.append(f"  nginx: {len(bodies)} bodies, {total / 1e6:.1f} MB on {len(by_connection)} connections; "
                 f"first body starts {first_body:.3f} s, last ends {last_end:.3f} s (exit at {wall:.3f})")
    hfget_log = trace_dir / f"{name}.hfget.log"
    if hfget_log.exists():
        said = [line for line in hfget_log.read_text(errors="replace").splitlines() if "connections' time" in line]
        if said:
            lines.append("  hfget: " + said[-1].split("connections' time", 1)[1].lstrip(", "))
    cut = [r for r in bodies if r["asked"] is not None and r["bytes"] < r["asked"]]
    durations = sorted(r["end"] - r["start"] for r in bodies)
    lines.append(f"  bodies: {len(cut)} cut short ({sum(r['asked'] - r['bytes'] for r in cut) / 1e6:.1f} MB not sent), "
                 f"{len(bodies) / max(len(by_connection), 1):.1f} per connection; duration median "
                 f"{durations[len(durations) // 2] * 1000:.1f} ms, p90 {durations[int(len(durations) * 0.9)] * 1000:.1f} ms, "
                 f"mean size {total / len(bodies) / 1e6:.1f} MB")
    lines.append(f"  connections: busy {busy:.3f} s, waiting between bodies {waiting:.3f} s "
                 f"({waiting / max(busy + waiting, 1e-9):.1%}); first connection done for good at {first_idle:.3f} s, "
                 f"tail {last_end - first_idle:.3f} s")
    lines.append("  waits between bodies (previous → next, small under 1 MB): " + "; ".join(
        f"{kind} {len(v)} x median {sorted(v)[len(v) // 2] * 1000:.1f} ms, sum {sum(v):.3f} s"
        for kind, v in sorted(gaps.items())))
    small = [r for r in bodies if r["bytes"] < SMALL_BODY]
    if small:
        lines.append(f"  small bodies: {len(small)}, {sum(r['bytes'] for r in small) / 1e3:.0f} KB, nginx's time on them "
                     f"{sum(r['end'] - r['start'] for r in small) * 1000:.1f} ms in all")
    if hfget_log.exists():
        plans = [line for line in hfget_log.read_text(errors="replace").splitlines() if "reconstructions asked" in line]
        if plans:
            lines.append("  hfget (-v): " + plans[-1].split("Xet: ", 1)[-1])
    return "\n".join(lines)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    trace_dir = Path(sys.argv[1])
    names = sorted(p.name[: -len(".run.json")] for p in trace_dir.glob("*.run.json"))
    if not names:
        print(f"trace_report: no NAME.run.json in {trace_dir}", file=sys.stderr)
        return 1
    print("\n".join(report(trace_dir, name) for name in names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
