"""hfget's Xet client against the test Hub's CAS, whose xorbs and shards the real JS Xet writer produced.

Every test uploads a model through `@huggingface/hub`'s uploadFiles (harness.Hub.xet_upload), then downloads
it with hfget and compares every byte with the source files. Covered: both layouts over Xet; which host saw
which token (Hub token to the Hub only, Xet token to the CAS only, none to the xorb server); --no-xet and
HF_HUB_DISABLE_XET; the fall-back to the bridge when the token endpoint or the CAS is down; V2 missing (V1);
each fault on xorb fetches and on the CAS; an expired token and expired presigned URLs; kill -9 in the middle
of a Xet download and the resume (bytes fetched ≈ bytes missing).
"""

from __future__ import annotations

import hashlib
import json
import re
import signal
import struct
import sys
import time
import unittest
from pathlib import Path

from harness import KIB, MIB, REPO_ROOT, Hub, source_files, wait_until
from support import HfgetTestCase

sys.path.insert(0, str(REPO_ROOT / "tests" / "hub"))
from xet_format import decode_chunk, walk_xorb  # noqa: E402

REPO = "org/xet-model"


def events(stderr: str) -> list[dict]:
    found = []
    for line in stderr.splitlines():
        if line.startswith("{"):
            try:
                found.append(json.loads(line))
            except ValueError:
                pass
    return found


def read_chunk_layout(path: Path) -> tuple[int, list[tuple[str, int, int, list[int]]]]:
    """hfget's chunk layout record (src/xet/chunk_layout.hpp): (file size, [(xorb, offset, first chunk, lengths)])."""
    data = path.read_bytes()
    assert data[:16] == b"hfget-xet-layout", data[:16]
    version, size, count = struct.unpack_from("<IQI", data, 16)
    assert version == 1, version
    runs, at = [], 32
    for _ in range(count):
        xorb = data[at:at + 64].decode()
        offset, first, chunks = struct.unpack_from("<QII", data, at + 64)
        lengths = list(struct.unpack_from(f"<{chunks}I", data, at + 80))
        runs.append((xorb, offset, first, lengths))
        at += 80 + 4 * chunks
    assert at == len(data), (at, len(data))
    return size, runs


class XetDownloadTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=3, shard_size=3 * MIB // 2)
        cls.files = source_files(cls.source)
        cls.hub = cls.start_hub({}, xet=True)
        cls.upload = cls.hub.xet_upload(cls.source, REPO)
        cls.xet_files = set(cls.upload.xet_hashes)

    def setUp(self):
        self.hub.clear_faults()
        self.hub.reset_logs()

    def download(self, *extra: str, env: dict | None = None, layout: str = "local"):
        target = self.hub.new_dir(layout)
        where = ["--local-dir", str(target)] if layout == "local" else ["--cache-dir", str(target)]
        result = self.hub.run_hfget(["download", REPO, *where, "--progress", "json", "--json", *extra], env=env)
        return result, target

    def assertAllFilesArrived(self, result, target: Path, layout: str = "local") -> dict:
        self.assertEqual(result.code, 0, result.stderr[-3000:])
        document = json.loads(result.stdout)
        root = Path(document["snapshot_path"]) if layout == "cache" else target
        for path, expected in self.files.items():
            self.assertEqual((root / path).read_bytes(), (self.source / path).read_bytes(), path)
        return document

    def paths_taken(self, result) -> dict[str, str]:
        taken = {}
        for event in events(result.stderr):
            if event.get("event") == "file_path":
                taken[event["path"]] = event["via"]
        return taken

    def assertTokensWhereTheyBelong(self):
        requests = self.hub.requests()
        for record in requests:
            listener, token = record["listener"], record.get("token")
            if listener == "xorb":
                self.assertIsNone(token, record)
                self.assertFalse(record.get("has_authorization"), record)
            elif listener == "cas":
                self.assertTrue(token is None or token.startswith("xet-read"), record)
            elif listener == "hub":
                self.assertFalse(token is not None and token.startswith("xet-"), record)
        self.assertTrue(any(r["listener"] == "xorb" for r in requests), "no xorb was fetched")

    def test_a_xet_repo_downloads_byte_identical_into_a_local_dir_over_xet(self):
        result, target = self.download()
        document = self.assertAllFilesArrived(result, target)
        taken = self.paths_taken(result)
        self.assertTrue(self.xet_files, "the JS writer stored nothing in Xet")
        for path in self.xet_files:
            self.assertEqual(taken.get(path), "xet", path)
        summary = document["summary"]
        xet_bytes = sum(self.files[p].size for p in self.xet_files)
        self.assertEqual(summary["bytes_over_xet"], xet_bytes)
        self.assertLessEqual(summary["xorb_bytes_fetched"], xet_bytes * 1.05)
        for entry in document["files"]:
            if entry["path"] in self.xet_files:
                self.assertEqual(entry["xet_hash"], self.upload.xet_hashes[entry["path"]])
        # Where the connections' time went: every part is there, and receiving is what the others leave of
        # `fetching` (none, when hashing outside ranges, at activation or verification, made up the rest).
        seconds = summary["connection_seconds"]
        parts = ("receiving", "writing", "hashing", "waiting_for_file", "planning")
        for name in (*parts, "fetching", "finishing", "idle"):
            self.assertGreaterEqual(seconds[name], 0, name)
        self.assertGreater(seconds["fetching"], 0)
        if seconds["receiving"] > 0:
            self.assertAlmostEqual(sum(seconds[name] for name in parts), seconds["fetching"], delta=1e-6)
        else:
            self.assertGreaterEqual(sum(seconds[name] for name in parts), seconds["fetching"])
        self.assertTokensWhereTheyBelong()
        plain = self.hub.run_hfget(["download", REPO, "--local-dir", str(self.hub.new_dir("local"))])
        self.assertEqual(plain.code, 0, plain.stderr[-3000:])
        self.assertIn("over Xet:", plain.stderr)

    def test_the_read_token_is_asked_over_the_listings_connection(self):
        # A connection of its own would cost a TCP (and on the Hub a TLS) handshake between the listing and the
        # first plan, which every Xet range waits behind.
        result, target = self.download()
        self.assertAllFilesArrived(result, target)
        hub = self.hub.hub_requests()
        tree = [r for r in hub if "/tree/" in r["path"]]
        token = [r for r in hub if "/xet-read-token/" in r["path"]]
        self.assertTrue(tree, hub)
        self.assertEqual(len(token), 1, token)
        self.assertEqual(token[0]["client_port"], tree[-1]["client_port"], (tree, token))

    def test_verbose_counts_the_reconstructions_the_cas_was_asked(self):
        result, target = self.download("-v", "--connections", "4")
        self.assertAllFilesArrived(result, target)
        match = re.search(r"Xet: (\d+) reconstructions asked, (\d+) of them ahead of their ranges and used; ranges "
                          r"found their plan ready (\d+), being asked (\d+), queued (\d+), not asked (\d+)",
                          result.stderr)
        self.assertIsNotNone(match, result.stderr[-3000:])
        asked, used, ready, waited, queued, missing = map(int, match.groups())
        answered = [r for r in self.hub.requests() if r["listener"] == "cas" and "/reconstructions/" in r["path"]]
        self.assertEqual(asked, len(answered))
        self.assertGreaterEqual(asked, len(self.xet_files))
        # A plan handed over was found ready or waited for; every range looked for one.
        self.assertLessEqual(used, ready + waited)
        self.assertGreaterEqual(ready + waited + queued + missing, len(self.xet_files))

    def test_a_xet_repo_downloads_into_the_cache_and_a_rerun_asks_nothing_of_the_cas(self):
        result, target = self.download(layout="cache")
        self.assertAllFilesArrived(result, target, layout="cache")
        self.hub.reset_logs()
        again = self.hub.run_hfget(["download", REPO, "--cache-dir", str(target)])
        self.assertEqual(again.code, 0, again.stderr)
        self.assertEqual([r for r in self.hub.requests() if r["listener"] in ("cas", "xorb")], [])

    def assertChunkLayoutsTellTheTruth(self, state_dir: Path) -> None:
        """Each Xet file has a record, by its SHA-256, whose every run is what the JS writer's xorb chunks decode
        to at that offset of the file, and which covers the whole file (one fresh download, no resume)."""
        for path in self.xet_files:
            content = (self.source / path).read_bytes()
            record = state_dir / "xet-layouts" / hashlib.sha256(content).hexdigest()
            self.assertTrue(record.is_file(), f"{path}: no chunk layout record at {record}")
            size, runs = read_chunk_layout(record)
            self.assertEqual(size, len(content), path)
            self.assertEqual(sum(sum(lengths) for *_, lengths in runs), len(content), f"{path}: gaps")
            for xorb, offset, first, lengths in runs:
                data = (self.hub.xet_store_dir / "xorbs" / xorb).read_bytes()
                starts = walk_xorb(data)
                for k, length in enumerate(lengths):
                    chunk = decode_chunk(data, starts[first + k])
                    self.assertEqual(len(chunk), length, f"{path}: chunk {first + k} of {xorb[:12]}")
                    self.assertEqual(content[offset:offset + length], chunk, f"{path} at {offset}")
                    offset += length

    def test_each_xet_file_gets_a_true_chunk_layout_record_in_both_layouts(self):
        result, target = self.download()
        self.assertAllFilesArrived(result, target)
        self.assertChunkLayoutsTellTheTruth(target / ".cache" / "huggingface" / "hfget")
        result, target = self.download(layout="cache")
        self.assertAllFilesArrived(result, target, layout="cache")
        self.assertChunkLayoutsTellTheTruth(target / f"models--{REPO.replace('/', '--')}" / "hfget")

    def test_no_xet_and_hf_hub_disable_xet_take_the_bridge(self):
        for extra, env in ((["--no-xet"], None), ([], {"HF_HUB_DISABLE_XET": "1"})):
            with self.subTest(extra=extra, env=env):
                self.hub.reset_logs()
                result, target = self.download(*extra, env=env)
                self.assertAllFilesArrived(result, target)
                self.assertEqual(set(self.paths_taken(result).values()), {"bridge"})
                self.assertEqual([r for r in self.hub.requests() if r["listener"] in ("cas", "xorb")], [])

    def test_a_token_endpoint_that_is_down_falls_back_to_the_bridge_saying_so_once(self):
        self.hub.set_faults([{"target": "api", "path": "/api/models/*/xet-read-token/*", "kind": "status",
                              "status": 503, "times": -1}])
        result, target = self.download("--retries", "1")
        self.assertAllFilesArrived(result, target)
        self.assertEqual(set(self.paths_taken(result).values()), {"bridge"})
        self.assertEqual(result.stderr.count("no read token"), 1, result.stderr[-3000:])

    def test_a_cas_that_is_down_falls_back_to_the_bridge(self):
        self.hub.set_faults([{"target": "cas", "path": "*", "kind": "status", "status": 503, "times": -1}])
        result, target = self.download("--retries", "1")
        self.assertAllFilesArrived(result, target)
        self.assertEqual({self.paths_taken(result)[p] for p in self.xet_files}, {"bridge"})
        warnings = [e for e in events(result.stderr) if e.get("event") == "log" and e.get("level") == "warning"
                    and "LFS bridge" in e.get("message", "")]
        self.assertEqual(len(warnings), 1, warnings)

    def test_a_cas_without_v2_is_asked_v1(self):
        self.hub.set_faults([{"target": "cas", "path": "/v2/reconstructions/*", "kind": "status", "status": 501,
                              "times": -1}])
        result, target = self.download("--connections", "2")
        self.assertAllFilesArrived(result, target)
        paths = [r["path"] for r in self.hub.requests() if r["listener"] == "cas"]
        self.assertTrue(any("/v1/reconstructions/" in p for p in paths), paths)
        # Each connection may ask V2 before another's 501 arrives; after that, V1 only.
        self.assertLessEqual(sum("/v2/" in p for p in paths), 2, paths)

    def test_each_fault_on_xorbs_and_the_cas_ends_byte_correct_over_xet(self):
        faults = {
            "drop": {"target": "xorb", "path": "xorbs/*", "kind": "drop", "after_bytes": 70000, "times": 2},
            "503": {"target": "xorb", "path": "xorbs/*", "kind": "status", "status": 503, "times": 2},
            "429": {"target": "xorb", "path": "xorbs/*", "kind": "status", "status": 429, "retry_after": 1,
                    "times": 1},
            "stall": {"target": "xorb", "path": "xorbs/*", "kind": "stall", "after_bytes": 1000, "seconds": 4,
                      "times": 1},
            "flip": {"target": "xorb", "path": "xorbs/*", "kind": "flip", "offset": -1, "times": 2},
            "short": {"target": "xorb", "path": "xorbs/*", "kind": "short", "times": 2},
            "bad_range": {"target": "xorb", "path": "xorbs/*", "kind": "bad_range", "times": 2},
            "expire": {"target": "xorb", "path": "xorbs/*", "kind": "expire", "times": 2},
            "cas 500": {"target": "cas", "path": "/v2/reconstructions/*", "kind": "status", "status": 500,
                        "times": 2},
            "cas drop": {"target": "cas", "path": "/v2/reconstructions/*", "kind": "drop", "times": 1},
        }
        for name, rule in faults.items():
            with self.subTest(fault=name):
                self.hub.clear_faults()
                self.hub.set_faults([rule])
                self.hub.reset_logs()
                result, target = self.download("--stall-timeout", "2")
                self.assertAllFilesArrived(result, target)
                taken = self.paths_taken(result)
                for path in self.xet_files:
                    self.assertEqual(taken.get(path), "xet", f"{name}: {path} fell back: {result.stderr[-2000:]}")
                # A stalled answer is logged when the emulator's stall ends, after hfget gave up on it.
                wait_until(lambda: any(r.get("fault") for r in self.hub.requests()), timeout=8,
                           what=f"the {name} fault to be served")

    def test_an_expired_xet_token_is_renewed(self):
        # Written with tokens that last (a slow upload must not see its write token expire), then served by a
        # second emulator on the same store whose tokens live a second.
        store = self.workdir / "short-token-store"
        with Hub({}, xet_store=store) as writer:
            self.assertTrue(writer.xet_upload(self.source, REPO).xet_hashes)
        hub = self.start_hub({}, xet_store=store, xet_token_ttl=1)
        target = hub.new_dir("local")
        # Held back so that the download outlives its first token.
        hub.set_faults([{"target": "cas", "path": "/v2/reconstructions/*", "kind": "stall", "seconds": 1.5,
                         "times": 1}])
        result = hub.run_hfget(["download", REPO, "--local-dir", str(target), "--connections", "2"])
        self.assertEqual(result.code, 0, result.stderr[-3000:])
        for path in self.files:
            self.assertEqual((target / path).read_bytes(), (self.source / path).read_bytes(), path)
        tokens = [r for r in hub.requests() if r["listener"] == "hub" and "/xet-read-token/" in r["path"]]
        self.assertGreaterEqual(len(tokens), 2, "the token was renewed")


class XetResumeTest(HfgetTestCase):
    """kill -9 in the middle of a Xet download, then the same command: only what is missing crosses again."""

    RATE = 400 * KIB  # per connection, xorb bodies included

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=2, shard_size=3 * MIB)
        cls.files = source_files(cls.source)
        cls.total = sum(f.size for f in cls.files.values())
        cls.hub = cls.start_hub({}, xet=True, body_rate=cls.RATE)
        cls.upload = cls.hub.xet_upload(cls.source, REPO)

    def xorb_bytes_served(self) -> int:
        return sum(r.get("bytes_sent", 0) for r in self.hub.requests() if r["listener"] == "xorb")

    def test_kill_9_mid_file_resumes_fetching_only_what_is_missing(self):
        target = self.hub.new_dir("local")
        args = ["download", REPO, "--local-dir", str(target), "--connections", "2"]
        running = self.hub.start_hfget(args)
        self.addCleanup(running.ensure_stopped)

        def partial_bytes() -> int:
            return sum(p.stat().st_size for p in target.rglob("*.hfget-partial") if p.is_file())

        wait_until(lambda: partial_bytes() >= 1 * MIB or running.process.poll() is not None, timeout=60,
                   what="a partial Xet file of 1 MiB")
        self.assertIsNone(running.process.poll(), "hfget finished before it could be killed")
        running.signal(signal.SIGKILL)
        running.wait(timeout=30)
        time.sleep(0.5)
        self.hub.reset_logs()

        resumed = self.hub.run_hfget([*args, "--json"])
        self.assertEqual(resumed.code, 0, resumed.stderr[-3000:])
        for path in self.files:
            self.assertEqual((target / path).read_bytes(), (self.source / path).read_bytes(), path)
        summary = json.loads(resumed.stdout)["summary"]
        missing = summary["bytes_to_fetch"]
        self.assertLess(missing, self.total, "the killed run kept nothing")
        self.assertLessEqual(summary["bytes_downloaded"], missing * 1.02 + 256 * KIB)
        xet_missing = summary["bytes_over_xet"]
        self.assertGreater(xet_missing, 0)
        self.assertLessEqual(self.xorb_bytes_served(), xet_missing * 1.02 + 256 * KIB,
                             "the resume fetched xorb bytes it already had")


if __name__ == "__main__":
    unittest.main()
