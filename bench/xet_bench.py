"""The download bench's Xet scenario (`download_bench.py --xet`): hfget issue 18's "Done when" figures.

One Hub with Xet on (harness.Hub(xet=True, xorbs_on_nginx=True)): the model is uploaded once through the real
JS Xet writer (@huggingface/hub uploadFiles, timed), and the presigned xorb URLs point at the same nginx that
serves the bridge's bodies, so both paths are timed against the same static server and neither against the
emulator's Python. Then, side by side, round-robin, each into a fresh folder and checked by SHA-256:

  hfget         hfget download (Xet, the default)
  hfget-bridge  hfget download --no-xet (the LFS bridge: /resolve/ -> signed CDN URL)
  js-xetblob    @huggingface/hub snapshotDownload (XetBlob, /v2/reconstructions; tests/interop's pinned copy)
  hf            `hf download` (huggingface_hub + hf_xet), HF_ENDPOINT at the emulator; skipped without `hf`

Per row: wall, MB/s, CPU, peak RssAnon, xorb bytes and bridge (CDN) bytes on the wire against the file bytes.
Then the targets with PASS/MISS: hfget Xet >= hfget bridge (MB/s), hfget Xet RssAnon <= 64 MiB, and a resume
over Xet (kill -9 at --kill-at of the bytes on disk, re-run): the re-run's xorb + body bytes / missing bytes
<= 1.02.

--xet-store DIR keeps the store there; a DIR that already holds the bench repo (its commits.jsonl) is served
again without an upload and without node (the GPU server has none: bench/device/run --part xet carries one).
The model must then be the same one (same --size, --shards and seed: make_model is deterministic).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import download_bench as db
import harness

XET_TOOLS = ("hfget", "hfget-bridge", "js-xetblob", "hf")
INTEROP_DIR = db.ROOT / "tests" / "interop"
RSS_TARGET_KIB = 64 * 1024
RESUME_TARGET = 1.02
MODEL_RECORD = "bench-model.json"   # in a kept store: the --size and --shards of the model it holds


class XetBench(db.Bench):
    """Bench with the Xet scenario's tools: hfget-bridge (--no-xet) and the JS reader over Xet."""

    def __init__(self, args, work: Path, expected: dict[str, tuple[int, str]]) -> None:
        args.variants = {**getattr(args, "variants", {}), "hfget-bridge": ["--no-xet"]}
        super().__init__(args, work, expected)
        self.commit = ""   # the upload's commit: where snapshotDownload's files end up
        self.writer: str | None = None   # who wrote a reused store, when its bench-model.json says

    def command(self, tool: str, hub: harness.Hub, run_dir: Path):
        if tool != "js-xetblob":
            return super().command(tool, hub, run_dir)
        home = run_dir / "home"
        home.mkdir()
        cache = run_dir / "cache"
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": str(home),
               "NO_PROXY": "*", "no_proxy": "*"}
        target = cache / f"models--{db.REPO.replace('/', '--')}" / "snapshots" / self.commit
        return ([self.node, str(INTEROP_DIR / "snapshot_download.mjs"), hub.url, db.REPO, str(cache), self.commit],
                env, target)

    def unavailable(self, tool: str) -> str | None:
        if tool == "js-xetblob":
            if not self.node:
                return "node is not installed"
            if not (INTEROP_DIR / "node_modules" / "@huggingface" / "hub" / "package.json").exists():
                return "tests/interop/node_modules is missing: run scripts/setup (npm ci --prefix tests/interop)"
            return None
        return super().unavailable(tool)


def wire_bytes(hub: harness.Hub) -> tuple[int, int, int]:
    """(xorb body bytes, bridge body bytes from nginx, xorb requests) of the last run (since reset_logs)."""
    nginx = hub.cdn_requests()
    xorbs = [r for r in nginx if r["path"].startswith("/xorbs/")]
    return (sum(r["bytes"] for r in xorbs), sum(r["bytes"] for r in nginx if not r["path"].startswith("/xorbs/")),
            len(xorbs))


def run(args, work: Path, model: Path, expected: dict[str, tuple[int, str]]) -> dict:
    """Upload once, run every tool --repeat times round-robin, then the resume; returns the report's data."""
    tools = [t for t in (args.xet_tools.split(",") if args.xet_tools else XET_TOOLS) if t]
    bench = XetBench(args, work, expected)
    store_dir = Path(args.xet_store).resolve() if args.xet_store else work / "xet-store"
    with harness.Hub({}, xet=True, xorbs_on_nginx=True, nginx_workers=args.nginx_workers,
                     xet_store=store_dir, limit_rate=args.xet_rate_cap,
                     extra_args=(["--cas-latency-ms", str(args.xet_cas_latency)] if args.xet_cas_latency else [])
                     + (["--hub-latency-ms", str(args.xet_hub_latency)] if args.xet_hub_latency else [])) as hub:
        upload_wall, xet_files = upload_or_reuse(hub, model, bench, store_dir)
        store_bytes = sum(p.stat().st_size for p in (store_dir / "xorbs").iterdir())
        print(f"[xet] {xet_files} Xet files, {store_bytes:,} xorb bytes in {store_dir}", file=sys.stderr, flush=True)
        results: list[db.Result] = []
        runs: dict[str, list[db.Result]] = {}
        for tool in tools:
            if why := bench.unavailable(tool):
                print(f"[xet] {tool}: skipped: {why}", file=sys.stderr, flush=True)
                results.append(db.Result("xet", tool, note=f"skipped: {why}"))
        runnable = [t for t in tools if not bench.unavailable(t)]
        for repeat in range(args.repeat):
            # Round-robin, each round starting one tool later: a tool's place in the round (right after the
            # JS reader's 1 GiB and its clean-up, say) changes its time, so each takes each place in turn.
            shift = repeat % max(len(runnable), 1)
            for tool in runnable[shift:] + runnable[:shift]:
                earlier = runs.get(tool, [])
                if earlier and not earlier[0].ok:
                    continue
                result = bench.run_tool("xet", tool, hub, repeat)
                xorb, bridge, xorb_requests = wire_bytes(hub)
                result.extra.update(xorb_bytes=xorb, bridge_bytes=bridge, xorb_requests=xorb_requests)
                runs.setdefault(tool, []).append(result)
        results += [db.median_result(runs[tool]) for tool in tools if tool in runs]   # keeps its own wire bytes
        resume = None
        if not args.no_extras and "hfget" in runs:
            print("[xet] hfget kill -9 and resume over Xet ...", file=sys.stderr, flush=True)
            resume = bench.resume(hub)
            if "error" not in resume:
                resume["xorb_bytes"], resume["bridge_bytes"], resume["xorb_requests"] = wire_bytes(hub)
    if args.xet_store:
        slim_store(store_dir)
    order = {tool: i for i, tool in enumerate(tools)}
    results.sort(key=lambda r: order.get(r.tool, len(order)))
    return {"results": results, "resume": resume, "upload_wall": upload_wall, "store_bytes": store_bytes,
            "xet_files": xet_files, "total": bench.total, "files": len(expected), "store": str(store_dir),
            "rate_cap": args.xet_rate_cap, "cas_latency_ms": args.xet_cas_latency,
            "hub_latency_ms": args.xet_hub_latency,
            "writer": bench.writer}


def slim_store(store_dir: Path) -> None:
    """Drop the store's copies of Xet files (an emulator started on it rebuilds them from the xorbs): a store
    kept for the GPU server then costs the model's size once, not twice, of the device's 64 MiB carry."""
    for line in (store_dir / "commits.jsonl").read_text(encoding="utf-8").splitlines():
        for meta in json.loads(line)["files"].values():
            if meta["xet_hash"]:
                (store_dir / "files" / meta["sha256"]).unlink(missing_ok=True)


def upload_or_reuse(hub: harness.Hub, model: Path, bench: XetBench, store_dir: Path) -> tuple[float | None, int]:
    """Upload the model through the JS writer (timed), or serve the store's earlier upload of it.
    Returns (upload seconds or None when reused, Xet files). Raises SystemExit when neither can be done."""
    made_of = {"size": bench.args.size, "shards": bench.args.shards}
    if (store_dir / "commits.jsonl").exists() and hub.api(f"/api/models/{db.REPO}/revision/main").status == 200:
        recorded = json.loads((store_dir / MODEL_RECORD).read_text()) if (store_dir / MODEL_RECORD).exists() else {}
        bench.writer = recorded.pop("writer", None)   # bench/xet_local_store.py names hf_xet there
        if recorded != made_of:
            raise SystemExit(f"xet_bench: the store {store_dir} holds a model made with {recorded or 'unknown'}, "
                             f"not {made_of}: give that --size and --shards, or another --xet-store")
        bench.commit = hub.commit(db.REPO)
        listing = hub.api(f"/api/models/{db.REPO}/tree/{bench.commit}?recursive=true").json()
        print(f"[xet] reusing the store's {db.REPO}@{bench.commit[:12]} (no upload)", file=sys.stderr, flush=True)
        return None, sum(1 for e in listing if e.get("xetHash"))
    if not shutil.which("node") or not (INTEROP_DIR / "node_modules" / "@huggingface" / "hub").is_dir():
        raise SystemExit(f"xet_bench: no JS Xet writer here (node, tests/interop/node_modules) and no earlier "
                         f"upload of {db.REPO} in {store_dir}: nothing to serve")
    print(f"[xet] uploading {bench.total / db.GIB:.2f} GiB through the JS Xet writer ...", file=sys.stderr,
          flush=True)
    started = time.monotonic()
    upload = hub.xet_upload(model, db.REPO, timeout=max(600.0, bench.total / 2e6))
    bench.commit = upload.commit
    (store_dir / MODEL_RECORD).write_text(json.dumps(made_of) + "\n")
    return time.monotonic() - started, len(upload.xet_hashes)


def mb(value: float) -> str:
    return f"{value / 1e6:.0f}"


def report(data: dict) -> str:
    total, results, resume = data["total"], data["results"], data["resume"]
    cap = f", nginx limit_rate {data['rate_cap']} per connection" if data.get("rate_cap") else ""
    if data.get("cas_latency_ms"):
        cap += f", the CAS answering {data['cas_latency_ms']:g} ms late"
    if data.get("hub_latency_ms"):
        cap += f", the Hub answering {data['hub_latency_ms']:g} ms late"
    lines = [f"\nscenario xet (Hub emulator + nginx serving the bridge's bodies and the xorbs{cap}): {data['files']} files, "
             f"{total / db.GB:.2f} GB ({total / db.GIB:.2f} GiB), {data['xet_files']} of them Xet",
             (f"upload through the JS Xet writer (@huggingface/hub uploadFiles): {data['upload_wall']:.1f}s "
              f"({total / data['upload_wall'] / 1e6:.0f} MB/s)" if data["upload_wall"] else
              f"no upload: the store {data['store']} was written earlier by {data.get('writer') or 'the JS Xet writer'}")
             + f", {data['store_bytes']:,} xorb bytes stored ({data['store_bytes'] / total:.3f} x the file bytes)", ""]
    width = max([12] + [len(r.tool) for r in results])
    header = (f"{'tool':<{width}} {'wall s':>7} {'+sync s':>8} {'MB/s':>6} {'CPU s':>6} {'anon MiB':>8} "
              f"{'xorb MB':>8} {'xorb req':>8} {'bridge MB':>9} {'wire/size':>9} {'spread':>11}  check")
    lines += [header, "-" * len(header)]
    for r in results:
        if r.wall is None:
            lines.append(f"{r.tool:<{width}} {r.note}")
            continue
        xorb, bridge = r.extra.get("xorb_bytes", 0), r.extra.get("bridge_bytes", 0)
        anon = f"{r.anon_kib / 1024:.1f}" if r.anon_kib else "-"
        spread = f"{min(r.walls):>5.2f}-{max(r.walls):<5.2f}" if r.walls else "-"
        lines.append(f"{r.tool:<{width}} {r.wall:>7.2f} {r.synced:>8.2f} {total / r.wall / 1e6:>6.0f} {r.cpu:>6.2f} "
                     f"{anon:>8} {mb(xorb):>8} {r.extra.get('xorb_requests', 0):>8} {mb(bridge):>9} "
                     f"{(xorb + bridge) / total:>9.3f} {spread:>11}  {'ok' if r.ok else r.note}")
    lines += [""] + target_lines(data)
    return "\n".join(lines)


def verdict(ok: bool, text: str) -> str:
    return f"{'PASS' if ok else 'MISS'} ({text})"


def target_lines(data: dict) -> list[str]:
    total, resume = data["total"], data["resume"]
    rows = {r.tool: r for r in data["results"]}
    xet, bridge = db.rate_of(rows.get("hfget"), total), db.rate_of(rows.get("hfget-bridge"), total)
    lines = []
    if xet and bridge:
        lines.append(f"[xet] target hfget Xet >= hfget bridge: {xet / 1e6:.0f} vs {bridge / 1e6:.0f} MB/s, ratio "
                     f"{xet / bridge:.2f}: " + verdict(xet >= bridge, f"margin {xet / bridge - 1:+.1%}"))
    else:
        lines.append("[xet] target hfget Xet >= hfget bridge: not checked (a row failed or did not run)")
    for tool in ("js-xetblob", "hf"):
        if (other := db.rate_of(rows.get(tool), total)) and xet:
            lines.append(f"[xet] hfget Xet vs {tool} {other / 1e6:.0f} MB/s: ratio {xet / other:.2f}")
    if (row := rows.get("hfget")) and row.anon_kib:
        lines.append(f"[xet] target hfget Xet peak RssAnon <= 64 MiB: {row.anon_kib / 1024:.1f} MiB: "
                     + verdict(row.anon_kib <= RSS_TARGET_KIB, "sampled every 100 ms: a lower bound"))
    if resume is None:
        lines.append("[xet] resume: not run (--no-extras, or hfget did not run)")
    elif "error" in resume:
        lines.append(f"[xet] resume: {resume['error']}")
    else:
        ratio = resume["refetched"] / resume["missing"] if resume["missing"] > 0 else float("inf")
        lines.append(
            f"[xet] resume after kill -9 at {resume['on_disk_at_kill'] / total:.0%} on disk "
            f"({resume['killed_after']:.2f}s): re-run exit {resume['rerun_exit']}, {resume['rerun_wall']:.2f}s, "
            f"{'byte-correct' if resume['ok'] else 'FAILED: ' + '; '.join(resume['problems'])}; kept "
            f"{resume['kept']:,} (complete {resume['complete_bytes']:,} + resumed {resume['resumed_bytes']:,}), "
            f"missing {resume['missing']:,}; re-fetched {resume['xorb_bytes']:,} xorb bytes in "
            f"{resume['xorb_requests']} requests + {resume['bridge_bytes']:,} bridge bytes (with the Hub's small "
            f"bodies: {resume['refetched']:,})")
        lines.append(f"[xet] target resume re-fetched / missing <= {RESUME_TARGET}: {ratio:.4f}: "
                     + verdict(ratio <= RESUME_TARGET and resume["ok"], f"margin {ratio / RESUME_TARGET - 1:+.1%}; "
                               "everything nginx and the Hub sent the re-run"))
    return lines


def json_data(data: dict) -> dict:
    return {**data, "results": [r.__dict__ for r in data["results"]]}


def remove_empty_files(model: Path) -> list[str]:
    """The JS reader asks `Range: bytes=0-0` of every file and the emulator answers 416 for an empty one:
    the Xet model has none, so every tool downloads the same files."""
    removed = []
    for path in sorted(p for p in model.rglob("*") if p.is_file() and p.stat().st_size == 0):
        removed.append(path.relative_to(model).as_posix())
        path.unlink()
    return removed
