"""Interop with a client nobody here wrote: `@huggingface/hub` from npm (pinned in tests/interop/package.json).

Both directions, on one emulator and one cache:
  1. hfget downloads → the npm client's own cache scan (`scanCacheDir`) reports the repo, revision, files and
     sizes; its `snapshotDownload` finds every file already there and fetches no file at all.
  2. the npm client downloads → `hfget verify` passes and `hfget download` fetches no file.
  3. a Xet repo (uploaded by the npm client's own Xet writer): hfget downloads it over Xet and the npm client
     finds every file in that cache with no file, CAS or xorb request; the npm client downloads it through
     XetBlob and hfget finds every file in that cache.
  4. local dir: the npm client has no local-dir download (2.17.5: `snapshotDownload` and
     `downloadFileToCacheDir` take a `cacheDir` only), so hfget's local-dir metadata is checked field by field
     against HUB-PROTOCOL §5 (the Python client's format) instead.

The npm client runs unmodified, with its own fetch, against the emulator (which serves the POST paths-info
endpoint it uses) and nginx as the CDN. Requires node and `npm ci --prefix tests/interop` (scripts/setup).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import unittest
from pathlib import Path

from harness import KIB, REPO_ROOT, source_files
from support import CACHEDIR_TAG, HfgetTestCase, files_under, repo_folder_name

INTEROP_DIR = REPO_ROOT / "tests" / "interop"
NODE = shutil.which("node")
NPM_CLIENT = INTEROP_DIR / "node_modules" / "@huggingface" / "hub" / "package.json"
NODE_TIMEOUT = 60.0

REPO = "interop-org/model"          # the fixture as generated: nested folders and an empty file
NPM_REPO = "interop-org/no-empty"   # the same without its empty file (see EmptyFileTest for why)
DATASET = "interop-org/data"


def npm_client_missing() -> str | None:
    if NODE is None:
        return "node is not installed (scripts/setup installs it)"
    if not NPM_CLIENT.is_file():
        return f"{NPM_CLIENT.parent} is missing: run scripts/setup (npm ci --prefix tests/interop)"
    return None


@unittest.skipIf(npm_client_missing() is not None, npm_client_missing() or "")
class HubJsTestCase(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=3, shard_size=256 * KIB)
        cls.no_empty = cls.make_model("no-empty", shards=2, shard_size=128 * KIB, seed=3)
        empties = [p for p, f in source_files(cls.no_empty).items() if f.size == 0]
        for path in empties:
            (cls.no_empty / path).unlink()
        cls.dataset = cls.make_model("dataset", shards=1, shard_size=64 * KIB, seed=5)
        (cls.dataset / "extra" / "empty.txt").unlink()
        cls.hub = cls.start_hub({REPO: cls.source, NPM_REPO: cls.no_empty, f"dataset:{DATASET}": cls.dataset})

    # -- the npm client -----------------------------------------------------------------------------

    def node(self, script: str, *args) -> tuple[int, dict | None, str]:
        """Run tests/interop/<script> with a clean environment; returns (exit code, stdout JSON, stderr)."""
        home = self.hub.new_dir("node-home")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
               "NO_PROXY": "*", "no_proxy": "*"}
        completed = subprocess.run([NODE, str(INTEROP_DIR / script), *map(str, args)], env=env,
                                   stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=NODE_TIMEOUT)
        try:
            document = json.loads(completed.stdout) if completed.stdout.strip() else None
        except json.JSONDecodeError:
            self.fail(f"{script} printed no JSON:\n{completed.stdout}\n{completed.stderr}")
        return completed.returncode, document, completed.stderr

    def npm_scan(self, cache: Path) -> dict:
        code, report, stderr = self.node("scan_cache.mjs", cache)
        self.assertEqual(code, 0, stderr)
        return report

    def npm_download(self, repo: str, cache: Path, revision: str | None = None) -> str:
        code, result, stderr = self.node("snapshot_download.mjs", self.hub.url, repo, cache,
                                         *([revision] if revision else []))
        self.assertEqual(code, 0, f"npm snapshotDownload failed: {result}\n{stderr[-3000:]}")
        return result["snapshot"]

    # -- request-log assertions ---------------------------------------------------------------------

    def assertNoFileFetched(self, what: str) -> None:
        """No /resolve/ request (HEAD, probe or body) on the Hub and nothing at all from the CDN."""
        hub_paths = [f'{r["method"]} {r["path"]}' for r in self.hub.hub_requests()]
        self.assertEqual([p for p in hub_paths if "/resolve/" in p], [], f"{what}: no /resolve/ request")
        self.assertEqual(self.hub.cdn_requests(), [], f"{what}: no CDN request")
        self.assertTrue(all(" /api/" in p for p in hub_paths), f"{what}: only API requests: {hub_paths}")

    @staticmethod
    def blob_stats(cache: Path, repo: str, repo_type: str = "model") -> dict[str, tuple[int, int, int]]:
        blobs = cache / repo_folder_name(repo, repo_type) / "blobs"
        return {p.name: (p.stat().st_ino, p.stat().st_size, p.stat().st_mtime_ns) for p in blobs.iterdir()}


class HfgetToNpmTest(HubJsTestCase):
    """hfget writes the cache; the npm client reads it as its own."""

    def scanned_repo(self, cache: Path, repo: str, repo_type: str, source: Path) -> dict:
        report = self.npm_scan(cache)
        self.assertEqual(report["warnings"], [], "the npm scan must find nothing wrong in hfget's cache")
        self.assertEqual(len(report["repos"]), 1, report)
        scanned = report["repos"][0]
        self.assertEqual(scanned["id"], {"name": repo, "type": repo_type})
        self.assertEqual(scanned["path"], str(cache / repo_folder_name(repo, repo_type)))
        return scanned

    def assertScanMatchesSource(self, cache: Path, repo: str, source: Path, repo_type: str = "model") -> None:
        commit = self.hub.commit(repo, repo_type=repo_type)
        scanned = self.scanned_repo(cache, repo, repo_type, source)
        self.assertEqual([r["commitOid"] for r in scanned["revisions"]], [commit])
        revision = scanned["revisions"][0]
        self.assertEqual(revision["refs"], ["main"])

        # The npm scan (scanSnapshotDir in cache-management.ts) lists only the files directly in the snapshot
        # folder: it skips sub-folders instead of descending into them, so docs/notes.md, extra/empty.txt and
        # extra/nested/data.bin are not reported (huggingface_hub's scan_cache_dir does report them). This is
        # the npm client's behaviour, the same for its own downloads (see docs/layout.md, Interoperability).
        sources = source_files(source)
        top_level = {p: f for p, f in sources.items() if "/" not in p}
        self.assertLess(len(top_level), len(sources), "the fixture must have nested files for this to mean much")
        blobs = cache / repo_folder_name(repo, repo_type) / "blobs"
        self.assertEqual({f["path"]: f["size"] for f in revision["files"]},
                         {p: f.size for p, f in top_level.items()}, "every top-level file, with its exact size")
        for entry in revision["files"]:
            self.assertEqual(entry["blobPath"], os.path.realpath(blobs / top_level[entry["path"]].etag),
                             f'{entry["path"]}: the scan resolves the link to the blob named by its etag')
        self.assertEqual(revision["size"], sum(f.size for f in top_level.values()))
        distinct = {f.etag: f.size for f in top_level.values()}
        self.assertEqual(scanned["filesCount"], len(distinct), "filesCount counts distinct blobs")
        self.assertEqual(scanned["size"], sum(distinct.values()))

    def test_npm_scan_reports_the_repo_revision_files_and_sizes(self):
        cache = self.hub.new_dir("cache")
        self.assertSucceeded(self.hub.run_hfget(["download", REPO, "--cache-dir", cache]))
        self.assertScanMatchesSource(cache, REPO, self.source)

    def test_npm_scan_reads_a_dataset_as_a_dataset(self):
        cache = self.hub.new_dir("cache")
        self.assertSucceeded(self.hub.run_hfget(["download", DATASET, "--repo-type", "dataset",
                                                 "--cache-dir", cache]))
        self.assertScanMatchesSource(cache, DATASET, self.dataset, "dataset")

    def test_npm_snapshot_download_finds_every_file_and_fetches_none(self):
        cache = self.hub.new_dir("cache")
        first = self.hub.run_hfget(["download", REPO, "--cache-dir", cache])
        self.assertSucceeded(first)
        commit = self.hub.commit(REPO)
        before = self.blob_stats(cache, REPO)
        self.hub.reset_logs()

        snapshot = self.npm_download(REPO, cache)
        self.assertEqual(snapshot, str(cache / repo_folder_name(REPO) / "snapshots" / commit))
        # The npm client asks for the revision and the listing, then finds each file's snapshot link: no
        # paths-info, no Range probe, no body, for any file (the empty one and the nested ones included).
        self.assertNoFileFetched("npm snapshotDownload on hfget's cache")
        self.assertFalse(any("/paths-info/" in r["path"] for r in self.hub.hub_requests()))
        self.assertEqual(self.blob_stats(cache, REPO), before, "no blob rewritten")
        # And the cache is still exactly what hfget and huggingface_hub expect (the npm client rewrote
        # refs/main with the same bytes, no newline).
        self.assertCacheSnapshot(cache, REPO, commit, self.source)
        self.assertSucceeded(self.hub.run_hfget(["verify", REPO, "--cache-dir", cache], home=first.home))


    def test_npm_snapshot_download_finds_hfget_copies_in_a_cache_without_symlinks(self):
        # HF_HUB_DISABLE_SYMLINKS=1: real files in the snapshot, nothing in blobs/ (docs/layout.md). The npm
        # client, like huggingface_hub, takes a snapshot file that exists as downloaded.
        cache = self.hub.new_dir("cache")
        self.assertSucceeded(self.hub.run_hfget(["download", REPO, "--cache-dir", cache],
                                                env={"HF_HUB_DISABLE_SYMLINKS": "1"}))
        commit = self.hub.commit(REPO)
        snapshot_dir = cache / repo_folder_name(REPO) / "snapshots" / commit
        self.assertFalse(any((snapshot_dir / p).is_symlink() for p in source_files(self.source)))
        self.hub.reset_logs()
        self.assertEqual(self.npm_download(REPO, cache), str(snapshot_dir))
        self.assertNoFileFetched("npm snapshotDownload on hfget's cache without symlinks")
        self.assertEqual(files_under(cache / repo_folder_name(REPO) / "blobs"), [])


class NpmToHfgetTest(HubJsTestCase):
    """The npm client writes the cache; hfget reads it as its own."""

    def npm_cache(self) -> tuple[Path, str]:
        cache = self.hub.new_dir("cache")
        snapshot = self.npm_download(NPM_REPO, cache)
        commit = self.hub.commit(NPM_REPO)
        self.assertEqual(snapshot, str(cache / repo_folder_name(NPM_REPO) / "snapshots" / commit))
        # What the npm client wrote: blobs named by etag, relative links, refs/main without newline; and
        # none of hfget's records (trees/, hfget/) nor CACHEDIR.TAG.
        self.assertEqual(sorted(files_under(snapshot)), sorted(source_files(self.no_empty)))
        repo_dir = cache / repo_folder_name(NPM_REPO)
        self.assertEqual((repo_dir / "refs" / "main").read_bytes(), commit.encode())
        self.assertFalse((repo_dir / "trees").exists() or (repo_dir / "hfget").exists())
        return cache, commit

    def test_hfget_verify_passes_on_the_npm_clients_download(self):
        cache, commit = self.npm_cache()
        result = self.hub.run_hfget(["verify", NPM_REPO, "--cache-dir", cache, "--json"])
        self.assertSucceeded(result)
        report = json.loads(result.stdout)
        self.assertTrue(report["ok"], report)
        self.assertEqual(report["commit"], commit)
        checks = {c["name"]: c["status"] for c in report["checks"]}
        # No record of the listing exists offline (the npm client writes no trees/<commit>.json): the model
        # checks run and pass; completeness, sizes and hashes may only be skipped, never failed.
        for name in ("shard_set", "safetensors_headers", "config", "tokenizer"):
            self.assertEqual(checks.get(name), "pass", f"{name}: {report}")
        self.assertTrue(all(status in ("pass", "skip") for status in checks.values()), report)

    def test_hfget_verify_online_checks_every_hash_of_the_npm_clients_download(self):
        cache, commit = self.npm_cache()
        result = self.hub.run_hfget(["verify", NPM_REPO, "--cache-dir", cache, "--online", "--json"])
        self.assertSucceeded(result)
        report = json.loads(result.stdout)
        checks = {c["name"]: c["status"] for c in report["checks"]}
        for name in ("completeness", "sizes", "hashes", "shard_set", "safetensors_headers", "config", "tokenizer"):
            self.assertEqual(checks.get(name), "pass", f"{name}: {report}")
        self.assertEqual(report["summary"]["files_present"], len(source_files(self.no_empty)))

    def test_hfget_download_into_the_npm_clients_cache_fetches_no_file(self):
        cache, commit = self.npm_cache()
        before = self.blob_stats(cache, NPM_REPO)
        self.hub.reset_logs()
        result = self.hub.run_hfget(["download", NPM_REPO, "--cache-dir", cache])
        self.assertSucceeded(result)
        snapshot = cache / repo_folder_name(NPM_REPO) / "snapshots" / commit
        self.assertStdoutIsPath(result, snapshot)
        self.assertNoFileFetched("hfget download on the npm client's cache")
        self.assertEqual(self.blob_stats(cache, NPM_REPO), before, "no blob rewritten")
        self.assertEqual(sorted(files_under(snapshot)), sorted(source_files(self.no_empty)))


class XetInteropTest(HubJsTestCase):
    """A repo stored in Xet by the npm client's writer, read into one cache by each client in turn."""

    XET_REPO = "interop-org/xet-model"

    @classmethod
    def setUpClass(cls):
        HfgetTestCase.setUpClass.__func__(cls)
        cls.source = cls.make_model("xet-model", shards=2, shard_size=512 * KIB, seed=7)
        for path in [p for p, f in source_files(cls.source).items() if f.size == 0]:
            (cls.source / path).unlink()  # the npm reader cannot fetch an empty file (EmptyFileTest)
        cls.hub = cls.start_hub({}, xet=True)
        cls.upload = cls.hub.xet_upload(cls.source, cls.XET_REPO)

    def assertNoXetOrFileRequest(self, what: str) -> None:
        self.assertNoFileFetched(what)
        self.assertEqual([r for r in self.hub.requests() if r["listener"] in ("cas", "xorb")], [], what)

    def test_npm_snapshot_download_finds_hfgets_xet_download_and_fetches_nothing(self):
        self.assertTrue(self.upload.xet_hashes, "the npm writer stored nothing in Xet")
        cache = self.hub.new_dir("cache")
        first = self.hub.run_hfget(["download", self.XET_REPO, "--cache-dir", cache, "--json"])
        self.assertSucceeded(first)
        self.assertGreater(json.loads(first.stdout)["summary"]["bytes_over_xet"], 0, "hfget used the bridge")
        self.hub.reset_logs()
        snapshot = self.npm_download(self.XET_REPO, cache)
        self.assertEqual(snapshot, str(cache / repo_folder_name(self.XET_REPO) / "snapshots" / self.upload.commit))
        self.assertNoXetOrFileRequest("npm snapshotDownload on hfget's Xet download")
        for path in source_files(self.source):
            self.assertEqual((Path(snapshot) / path).read_bytes(), (self.source / path).read_bytes(), path)

    def test_hfget_finds_the_npm_clients_xet_download_and_fetches_nothing(self):
        cache = self.hub.new_dir("cache")
        snapshot = self.npm_download(self.XET_REPO, cache)
        self.assertTrue(any(r["listener"] == "xorb" for r in self.hub.requests()), "the npm client used Xet")
        self.hub.reset_logs()
        result = self.hub.run_hfget(["download", self.XET_REPO, "--cache-dir", cache])
        self.assertSucceeded(result)
        self.assertStdoutIsPath(result, Path(snapshot))
        self.assertNoXetOrFileRequest("hfget download on the npm client's Xet download")


class EmptyFileTest(HubJsTestCase):
    """Why NpmToHfgetTest uses a repo without an empty file.

    @huggingface/hub 2.17.5 probes every file it downloads with `GET /resolve/…` + `Range: bytes=0-0` and
    needs a 206 with `Content-Range: bytes 0-0/SIZE` (or Xet file info). For a 0-byte file no server can
    give that: the emulator answers 416 with `Content-Range: bytes */0` (RFC 9110 §14.1.1 and §15.5.17, and
    AWS S3's answer), nginx ignores the Range and answers 200 without Content-Range (also allowed); the
    client throws on either. This is the npm client's limitation, not hfget's: pinned here so that a
    client upgrade that fixes it shows up, and then NpmToHfgetTest can use the fixture with its empty file.
    """

    def test_npm_client_cannot_download_an_empty_file(self):
        cache = self.hub.new_dir("cache")
        code, result, stderr = self.node("snapshot_download.mjs", self.hub.url, REPO, cache)
        self.assertEqual(code, 1, f"the npm client now downloads empty files: {result}\n{stderr[-2000:]}")
        probes = [r for r in self.hub.hub_requests() if r["file"] == "extra/empty.txt" and r["range"] == "bytes=0-0"]
        self.assertTrue(probes and probes[-1]["status"] == 416, probes)
        self.assertIn("416", json.dumps(result) + stderr)


class LocalDirMetadataTest(HubJsTestCase):
    """Local dir. @huggingface/hub 2.17.5 cannot download into or read a local dir (no localDir anywhere in
    its download or cache code), so no round trip with it is possible; instead hfget's local-dir metadata is
    checked field by field against HUB-PROTOCOL §5, the format huggingface_hub writes and reads."""

    def test_local_dir_metadata_matches_hub_protocol_section_5(self):
        target = self.hub.new_dir("local")
        started = time.time()
        result = self.hub.run_hfget(["download", REPO, "--local-dir", target])
        self.assertSucceeded(result)
        finished = time.time()
        commit = self.hub.commit(REPO)
        sources = source_files(self.source)
        meta = target / ".cache" / "huggingface"

        # <local_dir>/<path>: real files, never symlinks, the source's bytes.
        self.assertEqual([p for p in files_under(target) if not p.startswith(".cache/")], sorted(sources))
        for path, source in sources.items():
            self.assertFalse((target / path).is_symlink(), path)
            self.assertEqual((target / path).read_bytes(), source.source.read_bytes(), path)

        # download/<path>.metadata: exactly 3 lines, each \n-terminated: commit, etag, Unix time (a float
        # Python's float() reads), not older than the file's mtime - 1 s (or Python ignores it as stale).
        for path, source in sources.items():
            raw = (meta / "download" / f"{path}.metadata").read_bytes()
            self.assertTrue(raw.endswith(b"\n"), f"{path}.metadata ends with a newline")
            lines = raw.decode("ascii").split("\n")[:-1]
            self.assertEqual(len(lines), 3, f"{path}.metadata: {raw!r}")
            line_commit, line_etag, line_time = lines
            self.assertEqual(line_commit, commit, f"{path}.metadata line 1")
            self.assertRegex(line_commit, r"^[0-9a-f]{40}$")
            self.assertEqual(line_etag, source.etag, f"{path}.metadata line 2 (normalised etag)")
            self.assertRegex(line_etag, r"^[0-9a-f]{64}$" if source.lfs else r"^[0-9a-f]{40}$")
            self.assertRegex(line_time, r"^\d+(\.\d+)?$", f"{path}.metadata line 3")
            stamp = float(line_time)
            self.assertGreaterEqual(stamp, (target / path).stat().st_mtime - 1, f"{path}: metadata older than file")
            self.assertGreaterEqual(stamp, started - 1)
            self.assertLessEqual(stamp, finished + 1)
            # The lock, if present, is <path>.metadata with .lock as suffix (metadata_path.with_suffix).
            lock = meta / "download" / f"{path}.lock"
            if lock.exists():
                self.assertTrue(lock.is_file() and not lock.is_symlink(), path)

        # .gitignore is "*" with no newline; CACHEDIR.TAG is huggingface_hub's text, byte for byte.
        self.assertEqual((meta / ".gitignore").read_bytes(), b"*")
        self.assertEqual((meta / "CACHEDIR.TAG").read_text(), CACHEDIR_TAG)

        # trees/<commit>.json: format 1, every file, sorted, byte-identical to json.dump(data, f, indent=1).
        tree_file = meta / "trees" / f"{commit}.json"
        expected_files = {}
        for path in sorted(sources):
            entry = {"size": sources[path].size, "blob_id": sources[path].git_oid}
            if sources[path].lfs:
                entry.update(lfs_sha256=sources[path].sha256, lfs_size=sources[path].size)
            expected_files[path] = entry
        self.assertEqual(tree_file.read_text(), json.dumps({"format_version": 1, "files": expected_files}, indent=1))

        # Nothing but huggingface_hub's names (and hfget's own folder) under .cache/huggingface, no partials,
        # and nothing outside the target (Python would also write refs/ into the HF cache; hfget does not).
        for path in files_under(meta):
            self.assertTrue(path in (".gitignore", "CACHEDIR.TAG") or path.startswith(("trees/", "hfget/"))
                            or re.fullmatch(r"download/.+\.(metadata|lock)", path), f"unexpected {path}")
        self.assertEqual(files_under(result.home), [], "nothing written outside the local dir")


if __name__ == "__main__":
    unittest.main()
