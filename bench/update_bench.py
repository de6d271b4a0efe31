#!/usr/bin/env python3
"""Updating a model to its next revision over Xet: bytes on the wire and wall time (hfget issue 19).

One Hub emulator with Xet, nginx serving the xorbs (presigned URLs, Range), as in download_bench.py --xet.
Revision 1 is a generated model (--size, --shards); revision 2 re-trains one shard (every tensor byte new)
and changes --spans spans of --span-size ("tensors") in every other shard, the safetensors headers kept. Both
are written by a real Xet writer, revision 2 after revision 1 and deduplicated against it by the writer, as on
the Hub: `--writer js`, @huggingface/hub uploadFiles through the emulator (the CAS's global-dedup query), or
`--writer hf_xet`, the Rust client of huggingface_hub into a local:// store with no server
(bench/xet_local_store.py; the GPU server, which has hf_xet and `hf` but no node). The default is js where node
and tests/interop/node_modules are there, hf_xet otherwise. Then for each tool, in a fresh target: revision 1
(not timed), then revision 2 (timed, its xorb and bridge bytes from nginx's log):

  hfget           hfget download (chunk reuse: copies what the files of revision 1 hold)
  hfget-no-reuse  hfget download --no-chunk-reuse (every chunk of the changed files fetched)
  hf              `hf download` (huggingface_hub + hf_xet) into a local dir; skipped without `hf`

Printed: per tool, the second download's wall, xorb and bridge MB, and the wire bytes against the model;
the bytes that changed (f x size) and the bytes the writer stored anew (what no client can avoid); the
issue's target, wire <= f x size + 5 % of the model, with PASS/MISS; hfget against the others.

    python3 bench/update_bench.py --size 256MiB --shards 8 --hfget build/hfget
    python3 bench/update_bench.py --writer hf_xet --size 1GiB --shards 8 --work /dev/shm   # the GPU server
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import struct
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import download_bench as db  # noqa: E402
import harness  # noqa: E402
from make_model import make_model, parse_size  # noqa: E402

REPO = "bench/update-model"
TOOLS = ("hfget", "hfget-no-reuse", "hf")


def make_revisions(work: Path, size: int, shards: int, spans: int, span_size: int) -> tuple[Path, Path, int]:
    """(revision 1, revision 2, bytes changed between them)."""
    v1, v2 = work / "v1", work / "v2"
    make_model(v1, shards=shards, shard_size=size // shards, seed=19)
    shutil.copytree(v1, v2)
    draw, changed = random.Random(7), 0
    for number, shard in enumerate(sorted(p for p in v2.iterdir() if p.name.endswith(".safetensors"))):
        data = bytearray(shard.read_bytes())
        start = 8 + struct.unpack_from("<Q", data)[0]
        if number == 1:
            data[start:] = draw.randbytes(len(data) - start)
            changed += len(data) - start
        else:
            for k in range(spans):
                at = start + (k + 1) * (len(data) - start) // (spans + 1)
                data[at:at + span_size] = draw.randbytes(span_size)
                changed += span_size
        shard.write_bytes(bytes(data))
    return v1, v2, changed


def stored_anew(hub: harness.Hub, rev1: str, rev2: str) -> int:
    """Bytes of revision 2's terms that name no chunk range of a revision-1 term: what every client fetches."""
    def terms(revision: str) -> dict[str, list[dict]]:
        listing = hub.api(f"/api/models/{REPO}/tree/{revision}?recursive=true").json()
        token = hub.api(f"/api/models/{REPO}/xet-read-token/{revision}").json()
        return {e["path"]: harness.http_request(
                    "GET", f"{token['casUrl']}/v1/reconstructions/{e['xetHash']}",
                    {"Authorization": f"Bearer {token['accessToken']}"}).json()["terms"]
                for e in listing if e.get("xetHash")}

    old: dict[str, list[tuple[int, int]]] = {}
    for file_terms in terms(rev1).values():
        for t in file_terms:
            old.setdefault(t["hash"], []).append((t["range"]["start"], t["range"]["end"]))
    anew = 0
    for file_terms in terms(rev2).values():
        for t in file_terms:
            a, b = t["range"]["start"], t["range"]["end"]
            if not any(x <= a and b <= y for x, y in old.get(t["hash"], [])):
                anew += t["unpacked_length"]
    return anew


def js_writer_here() -> bool:
    return bool(shutil.which("node")) and (ROOT / "tests/interop/node_modules/@huggingface/hub/package.json").is_file()


def hf_xet_store(work: Path, v1: Path, v2: Path) -> Path:
    """Both revisions written by hf_xet into one local:// store, laid out for the emulator: branch rev1 holds
    revision 1, main revision 2 (a later --revision names each by its commit sha, as with the JS writer)."""
    import xet_bench  # bench/
    import xet_local_store  # bench/; imports hf_xet only when it writes

    for model in (v1, v2):   # xet_local_store leaves empty files out of the commit: none in either revision
        xet_bench.remove_empty_files(model)
    store = work / "xet-store"
    xet_local_store.build_revisions(store, [(f"model:{REPO}", "rev1", v1), (f"model:{REPO}", "main", v2)], work)
    return store


def command(tool: str, args, hub: harness.Hub, target: Path, home: Path, revision: str):
    if tool.startswith("hfget"):
        extra = ["--no-chunk-reuse"] if tool == "hfget-no-reuse" else []
        return ([args.hfget, "download", REPO, "--revision", revision, "--local-dir", str(target), *extra],
                harness.clean_hfget_env(home, hub.url))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": str(home),
           "NO_PROXY": "*", "no_proxy": "*", "HF_ENDPOINT": hub.url, "HF_HUB_DISABLE_TELEMETRY": "1",
           "HF_HOME": str(home / ".cache" / "huggingface")}
    return ["hf", "download", REPO, "--revision", revision, "--local-dir", str(target)], env


def wire(hub: harness.Hub) -> tuple[int, int]:
    """(xorb bytes, bridge bytes) nginx served since the last reset_logs."""
    log = hub.cdn_requests()
    xorbs = sum(r["bytes"] for r in log if r["path"].startswith("/xorbs/"))
    return xorbs, sum(r["bytes"] for r in log if not r["path"].startswith("/xorbs/"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hfget", default=str(ROOT / "build" / "hfget"))
    parser.add_argument("--size", default="256MiB")
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--spans", type=int, default=3, help="changed spans per shard (not the re-trained one)")
    parser.add_argument("--span-size", default="2MiB")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--writer", choices=("js", "hf_xet"), default=None,
                        help="the Xet writer of both revisions (default: js where node is, else hf_xet)")
    parser.add_argument("--work", help="scratch folder (default: the system's temp dir; tmpfs on the GPU server)")
    parser.add_argument("--nginx-workers", type=int, default=1)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    size, span_size = parse_size(args.size), parse_size(args.span_size)
    writer = args.writer or ("js" if js_writer_here() else "hf_xet")
    work = Path(tempfile.mkdtemp(prefix="hfget-update-bench-", dir=args.work))
    try:
        v1, v2, changed = make_revisions(work, size, args.shards, args.spans, span_size)
        started = time.monotonic()
        store = hf_xet_store(work, v1, v2) if writer == "hf_xet" else None
        model_bytes = sum(p.stat().st_size for p in v2.rglob("*") if p.is_file())
        expected = db.expected_files(v2)
        rows: dict[str, list[dict]] = {}
        with harness.Hub({}, xet=True, cdn="nginx", xorbs_on_nginx=True, xet_store=store,
                         nginx_workers=args.nginx_workers) as hub:
            if store is None:
                rev1 = hub.xet_upload(v1, REPO, timeout=max(600.0, size / 2e6)).commit
                rev2 = hub.xet_upload(v2, REPO, timeout=max(600.0, size / 2e6)).commit
            else:
                rev1, rev2 = hub.commit(REPO, "rev1"), hub.commit(REPO, "main")
            writer_name = "the JS Xet writer" if store is None else "hf_xet (its local:// store)"
            print(f"[update] two revisions written by {writer_name} in {time.monotonic() - started:.1f}s",
                  file=sys.stderr, flush=True)
            anew = stored_anew(hub, rev1, rev2)
            tools = [t for t in args.tools.split(",") if t and (t != "hf" or shutil.which("hf"))]
            for repeat in range(args.repeat):
                for tool in tools:
                    run_dir = Path(tempfile.mkdtemp(prefix=f"{tool}-", dir=work))
                    target, home = run_dir / "model", run_dir / "home"
                    home.mkdir()
                    argv, env = command(tool, args, hub, target, home, rev1)
                    first = db.run_measured(argv, env=env, timeout=600, log_dir=run_dir, name="rev1")
                    hub.reset_logs()
                    argv, env = command(tool, args, hub, target, home, rev2)
                    second = db.run_measured(argv, env=env, timeout=600, log_dir=run_dir, name="rev2",
                                             servers=set(db.server_groups(hub)))
                    xorbs, bridge = wire(hub)
                    problems = db.check_download(target, expected) if first.code == second.code == 0 else [
                        f"exit {first.code}/{second.code}: {second.stderr.strip().splitlines()[-1:]}"]
                    rows.setdefault(tool, []).append({"wall": second.wall, "cpu": second.cpu, "xorb_bytes": xorbs,
                                                      "bridge_bytes": bridge, "ok": not problems,
                                                      "problems": problems[:3]})
                    print(f"[update] {tool} #{repeat + 1}: {second.wall:.2f}s, {xorbs / 1e6:.1f} MB of xorbs, "
                          f"{bridge / 1e6:.1f} MB over the bridge, {'ok' if not problems else problems[:1]}",
                          file=sys.stderr, flush=True)
                    shutil.rmtree(run_dir, ignore_errors=True)
        target_bytes = changed + 0.05 * model_bytes
        lines = [f"update benchmark: {model_bytes / 1e6:.0f} MB model, {args.shards} shards; revision 2 changes "
                 f"{changed / 1e6:.1f} MB (f = {changed / model_bytes:.3f}); {writer_name} stored "
                 f"{anew / 1e6:.1f} MB of it anew; {os.cpu_count()} CPUs", "",
                 f"{'tool':<16}{'wall s':>8}{'xorb MB':>10}{'bridge MB':>11}{'wire/size':>11}  check"]
        summary = {}
        for tool, runs in rows.items():
            best = sorted(runs, key=lambda r: r["wall"])[len(runs) // 2]
            wire_bytes = best["xorb_bytes"] + best["bridge_bytes"]
            summary[tool] = {**best, "wire_bytes": wire_bytes, "runs": runs}
            lines.append(f"{tool:<16}{best['wall']:>8.2f}{best['xorb_bytes'] / 1e6:>10.1f}"
                         f"{best['bridge_bytes'] / 1e6:>11.1f}{wire_bytes / model_bytes:>11.3f}  "
                         f"{'ok' if all(r['ok'] for r in runs) else 'FAILED'}")
        lines.append("")
        if "hfget" in summary:
            wire_bytes = summary["hfget"]["wire_bytes"]
            verdict = "PASS" if wire_bytes <= target_bytes else "MISS"
            lines.append(f"[update] target: hfget's wire bytes <= f x size + 5 % of the model: "
                         f"{wire_bytes / 1e6:.1f} vs {target_bytes / 1e6:.1f} MB: {verdict}")
            lines.append(f"[update] hfget against what the writer stored anew: {wire_bytes / max(anew, 1):.3f} x")
            for other in ("hfget-no-reuse", "hf"):
                if other in summary:
                    lines.append(f"[update] {other} / hfget: wire {summary[other]['wire_bytes'] / max(wire_bytes, 1):.2f} x, "
                                 f"wall {summary[other]['wall'] / max(summary['hfget']['wall'], 1e-9):.2f} x")
        print("\n".join(lines))
        if args.json_out:
            Path(args.json_out).write_text(json.dumps({"model_bytes": model_bytes, "changed": changed,
                                                       "stored_anew": anew, "tools": summary}, indent=1))
        return 0 if all(r["ok"] for runs in rows.values() for r in runs) else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
