"""Write the Xet bench's model through hf_xet (the Rust writer of huggingface_hub) with no server at all, and turn
what it wrote into the Hub emulator's Xet store, so that `download_bench.py --xet --xet-store DIR` serves it.

The GPU server has hf_xet but no node, and the device takes only 64 MiB of carried files: the JS writer's store
cannot be carried there at a size that measures speed. hf_xet's `local://DIR` endpoint writes a real store
(chunking, packing, compression, shards) to a folder; this script then lays it out as tests/hub/xet_cas.py's
XetStore (xorbs/<hash>, shards/*.mdb, files/<sha256>, commits.jsonl, bench-model.json) and checks that the
emulator's shard parser finds every Xet file in it, by SHA-256.

    python3 bench/xet_local_store.py STORE_DIR --size 4GiB --shards 64

The model is tests/fixtures/make_model.py's, made with the bench's arguments (same bytes as the bench's own),
less its empty files (as download_bench.py --xet drops them). The safetensors shards, `*.bin` files and
tokenizer.json go through Xet, as the JS writer chose for the same model; the rest are plain files.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "fixtures"), str(ROOT / "tests" / "hub")]

from download_bench import sha256_file  # noqa: E402
from make_model import make_model, parse_size  # noqa: E402
from xet_cas import XetStore  # noqa: E402

REPO_KEY = "model:bench/model"   # download_bench.REPO, as the emulator's commits.jsonl names it
MODEL_RECORD = "bench-model.json"


def is_xet_file(relative: str) -> bool:
    return relative.endswith((".safetensors", ".bin")) or relative == "tokenizer.json"


def write_with_hf_xet(paths: list[Path], local: Path) -> str:
    """Upload `paths` into hf_xet's local:// store at `local` (the API as huggingface_hub 1.33 ships it).
    Returns the writer's name, for the bench's report."""
    import hf_xet  # the GPU server's; not a dependency of the project

    session = hf_xet.XetSession()
    commit = session.new_upload_commit(endpoint=f"local://{local}")
    sha256 = getattr(hf_xet, "COMPUTE_SHA256", None)
    for path in paths:
        if sha256 is not None:
            commit.start_upload_file(str(path), sha256=sha256)
        else:
            commit.start_upload_file(str(path))
    for finish in ("wait_to_finish", "commit", "finish"):
        if callable(getattr(commit, finish, None)):
            getattr(commit, finish)()
            version = getattr(hf_xet, "__version__", "")
            return f"hf_xet {version}".strip() + " (its local:// store, bench/xet_local_store.py)"
    raise SystemExit(f"xet_local_store: no way to finish the upload commit: {dir(commit)}")


def hex_name(path: Path) -> str | None:
    """The 64-hex-digit hash in a store file's name (`default.<hash>`, `<hash>`, `<hash>.xorb`)."""
    for part in path.name.split("."):
        if len(part) == 64 and all(c in "0123456789abcdef" for c in part):
            return part
    return None


def starts_with_chunk(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(1) == b"\0"


def build(store_dir: Path, size: int, shards: int, work: Path) -> None:
    model = work / "model"
    make_model(model, shards=shards, shard_size=size // shards)
    writer = build_revisions(store_dir, [(REPO_KEY, "main", model)], work)
    (store_dir / MODEL_RECORD).write_text(json.dumps({"size": size, "shards": shards, "writer": writer}) + "\n",
                                          encoding="utf-8")


def build_revisions(store_dir: Path, revisions: list[tuple[str, str, Path]], work: Path) -> str:
    """Upload each (repo key, branch, model folder) in turn through hf_xet into one local:// store, as one upload
    commit each, so that a later revision is deduplicated against what the earlier ones stored (the writer's
    own choice, as on the Hub), and lay the store out for the emulator with one commit record per revision.
    The store's files are hard links into the model folders and the local store: keep those on one filesystem.
    Returns the writer's name."""
    local = work / "local-store"
    writer = ""
    uploaded: list[tuple[str, str, Path, list[Path], list[Path]]] = []
    for repo_key, branch, model in revisions:
        files = sorted(p for p in model.rglob("*") if p.is_file() and p.stat().st_size > 0)
        xet_files = [p for p in files if is_xet_file(p.relative_to(model).as_posix())]
        started = time.monotonic()
        writer = write_with_hf_xet(xet_files, local)
        total = sum(p.stat().st_size for p in xet_files)
        print(f"xet_local_store: hf_xet wrote {branch} of {repo_key}: {len(xet_files)} files ({total:,} bytes) in "
              f"{time.monotonic() - started:.1f}s", file=sys.stderr, flush=True)
        uploaded.append((repo_key, branch, model, files, xet_files))
    stored = sorted(p for p in local.rglob("*") if p.is_file())
    print("xet_local_store: hf_xet's store: " + ", ".join(f"{p.relative_to(local)} ({p.stat().st_size:,})"
                                                           for p in stored[:6]), file=sys.stderr, flush=True)
    # A xorb starts with a chunk header (version 0); a shard with its magic tag (which starts with "H").
    xorbs = [p for p in stored if hex_name(p) and not p.name.endswith(".mdb") and starts_with_chunk(p)]
    shard_files = [p for p in stored if p.name.endswith(".mdb")]
    if not xorbs or not shard_files:
        listing = "\n".join(str(p.relative_to(local)) for p in sorted(local.rglob("*"))[:40])
        raise SystemExit(f"xet_local_store: hf_xet wrote no xorbs or no shards under {local}:\n{listing}")
    if store_dir.exists():
        shutil.rmtree(store_dir)
    for sub in ("xorbs", "shards", "files"):
        (store_dir / sub).mkdir(parents=True)
    for xorb in xorbs:
        target = store_dir / "xorbs" / hex_name(xorb)
        if not target.exists():
            os.link(xorb, target)
    for shard in shard_files:
        shutil.copyfile(shard, store_dir / "shards" / shard.name)
    store = XetStore(store_dir, token_ttl=3600, url_ttl=3600)   # indexes what is there, as the emulator will
    records = []
    for repo_key, branch, model, files, xet_files in uploaded:
        record = {"repo": repo_key, "branch": branch, "parent": "", "files": {}}
        for path in files:
            relative = path.relative_to(model).as_posix()
            sha256 = sha256_file(path)
            xet_hash = store.xet_hash_for_sha256(sha256) if path in xet_files else None
            if path in xet_files and xet_hash is None:
                raise SystemExit(f"xet_local_store: hf_xet's shards name no file with the SHA-256 of {relative}")
            missing = [t.xorb for t in (store.file(xet_hash).terms if xet_hash else ()) if not store.has_xorb(t.xorb)]
            if missing:
                raise SystemExit(f"xet_local_store: {relative} names xorbs the store lacks: {missing[:3]} "
                                 f"(files: {sorted(p.name for p in xorbs)[:3]})")
            target = store_dir / "files" / sha256
            if not target.exists():
                os.link(path, target)
            record["files"][relative] = {"sha256": sha256, "xet_hash": xet_hash, "lfs": xet_hash is not None}
        records.append(json.dumps(record))
    (store_dir / "commits.jsonl").write_text("\n".join(records) + "\n", encoding="utf-8")
    xorb_bytes = sum(p.stat().st_size for p in (store_dir / "xorbs").iterdir())
    total = sum(p.stat().st_size for *_, xet_files in uploaded for p in xet_files)
    print(f"xet_local_store: {len(xorbs)} xorbs ({xorb_bytes:,} bytes, {xorb_bytes / max(total, 1):.3f} x the "
          f"{total:,} bytes uploaded), {len(shard_files)} shards; store at {store_dir}", file=sys.stderr, flush=True)
    return writer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path, help="the emulator store to write (replaced if it exists)")
    parser.add_argument("--size", type=parse_size, default=parse_size("4GiB"))
    parser.add_argument("--shards", type=int, default=64)
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: next to the store)")
    args = parser.parse_args()
    store_dir = args.store.resolve()
    store_dir.parent.mkdir(parents=True, exist_ok=True)
    if args.work:
        args.work.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="xet-local-", dir=args.work or store_dir.parent))
    try:
        build(store_dir, args.size, args.shards, work)
    finally:
        # The store's files are links into the model and the local store: they stay; the names go.
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
