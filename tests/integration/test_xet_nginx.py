"""Xorbs served by nginx (Hub(xet=True, xorbs_on_nginx=True)), the layout the download bench's Xet row uses.

The bench must time hfget, not the emulator's Python xorb server, so there the presigned xorb URLs point at
the CDN's nginx (`/xorbs/default/<hash>`, Range, no signature check). This checks that the layout is a real
Xet source: hfget and the JS reader (snapshotDownload through XetBlob, V2 multi-range fetches) get every file
byte-identical, every xorb body came from nginx, and the emulator's own xorb server is not running.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import unittest
from pathlib import Path

from harness import MIB, REPO_ROOT, source_files
from support import HfgetTestCase

REPO = "org/xet-nginx"
INTEROP_DIR = REPO_ROOT / "tests" / "interop"
NODE = shutil.which("node")
NODE_TIMEOUT = 120


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class XorbsOnNginxTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if not NODE or not (INTEROP_DIR / "node_modules" / "@huggingface" / "hub" / "package.json").is_file():
            raise unittest.SkipTest("node or tests/interop/node_modules missing (scripts/setup): no Xet writer")
        cls.source = cls.make_model("model", shards=2, shard_size=3 * MIB // 2)
        # The JS reader asks for `Range: bytes=0-0` of every file and an empty one answers 416: not this test's
        # subject (test_xet_hub's model has none either).
        for empty in [p for p in cls.source.rglob("*") if p.is_file() and p.stat().st_size == 0]:
            empty.unlink()
        cls.files = source_files(cls.source)
        cls.hub = cls.start_hub({}, xet=True, xorbs_on_nginx=True)
        cls.upload = cls.hub.xet_upload(cls.source, REPO)

    def setUp(self):
        self.hub.reset_logs()

    def assertXorbsCameFromNginx(self):
        self.assertFalse([r for r in self.hub.requests() if r["listener"] == "xorb"])
        xorbs = self.hub.xorb_requests()
        self.assertTrue(xorbs, "no xorb request reached nginx")
        for record in xorbs:
            self.assertEqual(record["status"], 206, record)
            self.assertIsNone(record["authorization"], record)

    def test_xorb_urls_name_nginx(self):
        self.assertEqual(self.hub.xorb_url, self.hub.cdn_url)
        self.assertTrue(self.upload.xet_hashes)

    def test_hfget_over_xet_is_byte_identical(self):
        target = self.hub.new_dir("local")
        result = self.hub.run_hfget(["download", REPO, "--local-dir", str(target), "--progress", "json",
                                     "--connections", "1"])
        self.assertSucceeded(result)
        for path in self.files:
            self.assertEqual(sha256(target / path), sha256(self.source / path), path)
        via = {e["path"]: e["via"] for e in map(json.loads, filter(lambda l: l.startswith("{"),
                                                                    result.stderr.splitlines()))
               if e.get("event") == "file_path"}
        for path in self.upload.xet_hashes:
            self.assertEqual(via.get(path), "xet", path)
        self.assertXorbsCameFromNginx()
        # A xorb range read to its end leaves its connection open for the next one: one connection, one socket
        # for every range (a new TLS handshake per range would be the cost on the real CDN).
        xorbs = self.hub.xorb_requests()
        self.assertGreaterEqual(len(xorbs), 2)
        self.assertEqual(len({r["connection"] for r in xorbs}), 1, xorbs)

    def test_js_reader_is_byte_identical(self):
        cache = self.hub.new_dir("js-cache")
        done = subprocess.run([NODE, str(INTEROP_DIR / "snapshot_download.mjs"), self.hub.url, REPO, str(cache),
                               self.upload.commit], cwd=INTEROP_DIR, capture_output=True, text=True,
                              timeout=NODE_TIMEOUT)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr[-3000:])
        snapshot = Path(json.loads(done.stdout.strip().splitlines()[-1])["snapshot"])
        for path in self.files:
            self.assertEqual(sha256(snapshot / path), sha256(self.source / path), path)
        self.assertXorbsCameFromNginx()


if __name__ == "__main__":
    unittest.main()
