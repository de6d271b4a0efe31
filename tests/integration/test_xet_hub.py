"""The test Hub's Xet side, checked with clients nobody here wrote (hfget issue 18).

A small model is uploaded through the real JS Xet writer (`@huggingface/hub` 2.17.5 `uploadFiles`: its own
chunking, xorb packing, compression, hashing, dedup query) into the emulator at test time, then read back
with the JS reader (`snapshotDownload`, which reads Xet files through XetBlob and /v2/reconstructions):
byte-identical. The emulator's own answers are checked too: reconstructions with and without Range (V1 and
V2, assembled here from the fetched xorb ranges), token rules, presigned-URL rules, faults, the LFS bridge,
and dedup between two revisions. Needs node and `npm ci --prefix tests/interop` (scripts/setup).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import random
import shutil
import subprocess
import sys
import time
import unittest
from pathlib import Path

from harness import KIB, MIB, REPO_ROOT, XET_WRITER_TOKEN, Hub, http_request
from support import HfgetTestCase

sys.path.insert(0, str(REPO_ROOT / "tests" / "hub"))
from xet_format import decode_chunk, walk_xorb  # noqa: E402

INTEROP_DIR = REPO_ROOT / "tests" / "interop"
NODE = shutil.which("node")
NODE_TIMEOUT = 60.0
REPO = "xet-org/model"


def npm_client_missing() -> str | None:
    if NODE is None:
        return "node is not installed (scripts/setup installs it)"
    if not (INTEROP_DIR / "node_modules" / "@huggingface" / "hub" / "package.json").is_file():
        return "tests/interop/node_modules is missing: run scripts/setup (npm ci --prefix tests/interop)"
    return None


def write_model(directory: Path, seed: int) -> Path:
    """config.json and two safetensors of 1–3 MiB, each with a compressible and a random part."""
    draw = random.Random(seed)
    directory.mkdir(parents=True)
    (directory / "config.json").write_text(json.dumps({"model_type": "xet-test", "hidden_size": 64}) + "\n")
    (directory / "model-00001-of-00002.safetensors").write_bytes(
        b"\0" * (768 * KIB) + draw.randbytes(MIB + 300 * KIB) + b"weights " * (40 * KIB))
    (directory / "model-00002-of-00002.safetensors").write_bytes(
        draw.randbytes(600 * KIB) + bytes(range(256)) * (2 * KIB))
    return directory


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


@unittest.skipIf(npm_client_missing() is not None, npm_client_missing() or "")
class XetHubTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = write_model(cls.workdir / "v1", seed=1)
        cls.hub = cls.start_hub({}, xet=True)
        started = time.monotonic()
        cls.first = cls.hub.xet_upload(cls.source, REPO)
        cls.upload_seconds = time.monotonic() - started
        cls.first_log = cls.hub.requests()
        # Revision 2: one file changed near its end; the writer's chunk query should find revision 1's xorbs.
        cls.changed = cls.workdir / "v2"
        shutil.copytree(cls.source, cls.changed)
        changed = cls.changed / "model-00001-of-00002.safetensors"
        data = bytearray(changed.read_bytes())
        data[-200 * KIB:-199 * KIB] = b"CHANGED!" * (KIB // 8)
        changed.write_bytes(bytes(data))
        cls.hub.reset_logs()
        cls.second = cls.hub.xet_upload(cls.changed, REPO)
        cls.second_log = cls.hub.requests()

    def setUp(self):
        self.hub.clear_faults()

    # -- helpers ------------------------------------------------------------------------------------

    def read_token(self, revision: str | None = None) -> dict:
        response = self.hub.api(f"/api/models/{REPO}/xet-read-token/{revision or self.first.commit}")
        self.assertEqual(response.status, 200, response.body)
        return response.json()

    def reconstruction(self, path: str, version: int, byte_range: str | None = None, token: str | None = None):
        token = token or self.read_token()["accessToken"]
        headers = {**bearer(token), **({"Range": byte_range} if byte_range else {})}
        url = f"{self.hub.cas_url}/v{version}/reconstructions/{self.first.xet_hashes[path]}"
        return http_request("GET", url, headers)

    def assemble(self, answer: dict, version: int) -> bytes:
        """The file bytes from a reconstruction answer, fetching each term's xorb range as the answer says."""
        fetched: dict[str, list[tuple[int, int, bytes]]] = {}   # xorb -> (first chunk, end chunk, bytes)
        if version == 1:
            for xorb, entries in answer["fetch_info"].items():
                for entry in entries:
                    start, end = entry["url_range"]["start"], entry["url_range"]["end"]
                    response = http_request("GET", entry["url"], {"Range": f"bytes={start}-{end}"})
                    self.assertEqual(response.status, 206, response.body)
                    fetched.setdefault(xorb, []).append((entry["range"]["start"], entry["range"]["end"], response.body))
        else:
            for xorb, entries in answer["xorbs"].items():
                for entry in entries:
                    for part in entry["ranges"]:   # each signed range may be fetched on its own
                        start, end = part["bytes"]["start"], part["bytes"]["end"]
                        response = http_request("GET", entry["url"], {"Range": f"bytes={start}-{end}"})
                        self.assertEqual(response.status, 206, response.body)
                        fetched.setdefault(xorb, []).append((part["chunks"]["start"], part["chunks"]["end"],
                                                             response.body))
        out = bytearray()
        for term in answer["terms"]:
            first, end = term["range"]["start"], term["range"]["end"]
            block = next(b for b in fetched[term["hash"]] if b[0] <= first and end <= b[1])
            offsets = walk_xorb(block[2])
            piece = b"".join(decode_chunk(block[2], offsets[i - block[0]]) for i in range(first, end))
            self.assertEqual(len(piece), term["unpacked_length"])
            out += piece
        return bytes(out[answer["offset_into_first_range"]:])

    def js_snapshot(self, revision: str) -> Path:
        cache = self.hub.new_dir("js-cache")
        done = subprocess.run([NODE, str(INTEROP_DIR / "snapshot_download.mjs"), self.hub.url, REPO, str(cache),
                               revision], cwd=INTEROP_DIR, capture_output=True, text=True, timeout=NODE_TIMEOUT)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr[-3000:])
        return Path(json.loads(done.stdout.strip().splitlines()[-1])["snapshot"])

    # -- the writer ---------------------------------------------------------------------------------

    def test_upload_went_through_xet(self):
        self.assertLess(self.upload_seconds, 30)
        self.assertEqual(sorted(self.first.xet_hashes), ["model-00001-of-00002.safetensors",
                                                         "model-00002-of-00002.safetensors"])
        for value in self.first.xet_hashes.values():
            self.assertRegex(value, r"^[0-9a-f]{64}$")
        cas = [r for r in self.first_log if r["listener"] == "cas"]
        xorb_posts = [r for r in cas if r["method"] == "POST" and r["path"].startswith("/v1/xorbs/default/")]
        self.assertTrue(xorb_posts)
        self.assertTrue(any(r["path"] == "/v1/shards" and r["status"] == 200 for r in cas))
        for record in cas:
            self.assertTrue(record["has_authorization"])
            self.assertRegex(record["token"], r"^xet-write-\d+$")
        hub_token = "hub-" + sha256(f"Bearer {XET_WRITER_TOKEN}".encode())[:12]
        self.assertEqual({r["token"] for r in self.first_log if r["listener"] == "hub"}, {hub_token})
        for record in xorb_posts:
            self.assertEqual(record["status"], 200)
            self.assertTrue((self.hub.tmp / "xet" / "xorbs" / record["path"].rsplit("/", 1)[1]).is_file())
        paths = [r["path"] for r in self.first_log if r["listener"] == "hub"]
        self.assertIn(f"/api/models/{REPO}/preupload/main", paths)
        self.assertIn(f"/{REPO}.git/info/lfs/objects/batch", paths)
        self.assertIn(f"/api/models/{REPO}/commit/main", paths)

    def test_second_revision_dedups_against_the_first(self):
        size = (self.changed / "model-00001-of-00002.safetensors").stat().st_size
        posts = [r for r in self.second_log if r["listener"] == "cas" and r["path"].startswith("/v1/xorbs/")]
        self.assertTrue(posts, "the changed file needs at least one new xorb")
        new_xorb_bytes = sum(r["upload_bytes"] for r in posts)
        self.assertLess(new_xorb_bytes, size // 2)
        queries = [r for r in self.second_log if r["path"].startswith("/v1/chunks/default/")]
        self.assertTrue(any(r["status"] == 200 for r in queries), queries)
        self.assertNotEqual(self.first.commit, self.second.commit)
        self.assertEqual(self.first.xet_hashes["model-00002-of-00002.safetensors"],
                         self.second.xet_hashes["model-00002-of-00002.safetensors"])

    # -- the JS reader ------------------------------------------------------------------------------

    def test_js_reader_gets_every_file_byte_identical(self):
        for revision, source in ((self.first.commit, self.source), (self.second.commit, self.changed)):
            self.hub.reset_logs()
            snapshot = self.js_snapshot(revision)
            for path in sorted(p.name for p in source.iterdir()):
                self.assertEqual(sha256((snapshot / path).read_bytes()), sha256((source / path).read_bytes()), path)
            log = self.hub.requests()
            reconstructions = [r for r in log if r["listener"] == "cas"]
            self.assertTrue(reconstructions and all(r["path"].startswith("/v2/reconstructions/")
                                                    and r["token"].startswith("xet-read-") for r in reconstructions))
            xorb_gets = [r for r in log if r["listener"] == "xorb"]
            self.assertTrue(xorb_gets)
            self.assertFalse(any(r["has_authorization"] for r in xorb_gets))
            self.assertFalse(any(r["listener"] == "cdn" for r in log))
            # The Hub saw only the Hub token, the CAS only Xet tokens, the xorb server none.
            hub_token = "hub-" + sha256(f"Bearer {XET_WRITER_TOKEN}".encode())[:12]
            self.assertEqual({r["token"] for r in log if r["listener"] == "hub"} - {None}, set())
            self.assertTrue(all(r["host"] == self.hub.cas_url.split("/")[2] for r in reconstructions))
            self.assertTrue(all(r["token"] is None and r["host"] == self.hub.xorb_url.split("/")[2]
                                for r in xorb_gets))
            self.assertNotIn(hub_token, {r["token"] for r in reconstructions + xorb_gets})

    # -- reconstructions ----------------------------------------------------------------------------

    def test_reconstruction_whole_file_v1_and_v2(self):
        for path in self.first.xet_hashes:
            data = (self.source / path).read_bytes()
            for version in (1, 2):
                response = self.reconstruction(path, version)
                self.assertEqual(response.status, 200, response.body)
                answer = response.json()
                self.assertEqual(answer["offset_into_first_range"], 0)
                self.assertEqual(sum(t["unpacked_length"] for t in answer["terms"]), len(data))
                self.assertIn("fetch_info" if version == 1 else "xorbs", answer)
                self.assertEqual(sha256(self.assemble(answer, version)), sha256(data), (path, version))

    def test_reconstruction_of_a_range(self):
        path = "model-00001-of-00002.safetensors"
        data = (self.source / path).read_bytes()
        for first, last in ((0, 0), (100_000, 900_000), (len(data) - 10, len(data) - 1), (777_777, 777_777)):
            for version in (1, 2):
                answer = self.reconstruction(path, version, f"bytes={first}-{last}").json()
                # Only the chunks covering the range: far less than the file for a small range.
                self.assertLess(sum(t["unpacked_length"] for t in answer["terms"]), len(data))
                assembled = self.assemble(answer, version)
                self.assertEqual(assembled[:last - first + 1], data[first:last + 1], (first, last, version))
        self.assertEqual(self.reconstruction(path, 1, f"bytes={len(data)}-").status, 416)

    def test_token_rules(self):
        url = f"{self.hub.cas_url}/v2/reconstructions/{self.first.xet_hashes['model-00002-of-00002.safetensors']}"
        self.assertEqual(http_request("GET", url).status, 401)
        self.assertEqual(http_request("GET", url, bearer("not-a-token")).status, 401)
        token = self.read_token()
        self.assertEqual(set(token), {"accessToken", "exp", "casUrl"})
        self.assertEqual(token["casUrl"], self.hub.cas_url)
        self.assertGreater(token["exp"], time.time())
        self.assertEqual(http_request("GET", url, bearer(token["accessToken"])).status, 200)
        # A read token cannot upload.
        post = http_request("POST", f"{self.hub.cas_url}/v1/shards", bearer(token["accessToken"]), b"x")
        self.assertEqual(post.status, 401)
        self.assertEqual(self.hub.api(f"/api/models/{REPO}/xet-read-token/nope").status, 404)

    def test_presigned_xorb_urls(self):
        answer = self.reconstruction("model-00002-of-00002.safetensors", 1).json()
        entry = next(iter(answer["fetch_info"].values()))[0]
        start, end = entry["url_range"]["start"], entry["url_range"]["end"]
        self.assertNotEqual(entry["url"].split("/")[2], self.hub.cas_url.split("/")[2])
        self.assertEqual(http_request("GET", entry["url"], {"Range": f"bytes={start}-{end}"}).status, 206)
        self.assertEqual(http_request("GET", entry["url"], {"Range": f"bytes={start}-{end - 1}"}).status, 403)
        self.assertEqual(http_request("GET", entry["url"]).status, 403)
        forged = entry["url"].replace("X-Xet-Signature=", "X-Xet-Signature=0")
        self.assertEqual(http_request("GET", forged, {"Range": f"bytes={start}-{end}"}).status, 403)
        with_auth = http_request("GET", entry["url"], {"Range": f"bytes={start}-{end}", **bearer("x")})
        self.assertEqual(with_auth.status, 400)

    # -- the Hub side -------------------------------------------------------------------------------

    def test_resolve_carries_xet_headers_and_keeps_the_bridge(self):
        path = "model-00001-of-00002.safetensors"
        url = f"{self.hub.url}/{REPO}/resolve/{self.first.commit}/{path}"
        response = http_request("GET", url)
        self.assertEqual(response.status, 302)
        self.assertEqual(response.headers["X-Xet-Hash"], self.first.xet_hashes[path])
        self.assertIn('rel="xet-auth"', response.headers["Link"])
        self.assertIn(f'<{self.hub.cas_url}/v1/reconstructions/{self.first.xet_hashes[path]}>; '
                      'rel="xet-reconstruction-info"', response.headers["Link"])
        bridge = http_request("GET", response.headers["Location"])
        self.assertEqual(sha256(bridge.body), sha256((self.source / path).read_bytes()))
        info = http_request("GET", url, {"Accept": "application/vnd.xet-fileinfo+json, */*", "Range": "bytes=0-0"})
        self.assertEqual(info.status, 200)
        self.assertIn("application/vnd.xet-fileinfo+json", info.headers["Content-Type"])
        self.assertEqual(info.headers["X-Linked-Size"], str((self.source / path).stat().st_size))
        tree = self.hub.api(f"/api/models/{REPO}/tree/{self.first.commit}?recursive=true").json()
        regular = next(e for e in tree if e["path"] == "config.json")
        self.assertNotIn("xetHash", regular)

    def test_a_later_hub_on_the_same_store_serves_the_same_commits(self):
        store = self.workdir / "store-copy"
        shutil.copytree(self.hub.tmp / "xet", store)
        with Hub({}, xet_store=store, cdn="emulator") as later:
            self.assertEqual(later.commit(REPO), self.second.commit)
            self.assertEqual(later.commit(REPO, self.first.commit), self.first.commit)
            path = "model-00001-of-00002.safetensors"
            location = http_request("GET", f"{later.url}/{REPO}/resolve/{self.first.commit}/{path}")
            self.assertEqual(location.headers["X-Xet-Hash"], self.first.xet_hashes[path])
            self.assertEqual(sha256(http_request("GET", location.headers["Location"]).body),
                             sha256((self.source / path).read_bytes()))

    # -- faults -------------------------------------------------------------------------------------

    def test_v2_faults_leave_v1_working(self):
        self.hub.set_faults([{"path": "/v2/reconstructions/*", "kind": "status", "status": 501, "target": "cas",
                              "times": -1}])
        self.assertEqual(self.reconstruction("model-00002-of-00002.safetensors", 2).status, 501)
        self.assertEqual(self.reconstruction("model-00002-of-00002.safetensors", 1).status, 200)
        self.hub.set_faults([{"path": "*", "kind": "status", "status": 429, "retry_after": 3, "target": "cas"}])
        busy = self.reconstruction("model-00002-of-00002.safetensors", 1)
        self.assertEqual((busy.status, busy.headers["Retry-After"]), (429, "3"))

    def test_cas_down_and_token_endpoint_down(self):
        self.hub.set_faults([{"path": "*", "kind": "drop", "target": "cas"}])
        with self.assertRaises((ConnectionError, http.client.HTTPException)):
            self.reconstruction("model-00002-of-00002.safetensors", 2)
        self.hub.set_faults([{"path": "/api/models/*/xet-read-token/*", "kind": "status", "status": 503,
                              "target": "api"}])
        self.assertEqual(self.hub.api(f"/api/models/{REPO}/xet-read-token/main").status, 503)
        self.assertEqual(self.hub.api(f"/api/models/{REPO}/xet-read-token/main").status, 200)

    def test_xorb_fetch_faults(self):
        answer = self.reconstruction("model-00002-of-00002.safetensors", 1).json()
        xorb, entries = next(iter(answer["fetch_info"].items()))
        entry = entries[0]
        asked = {"Range": f"bytes={entry['url_range']['start']}-{entry['url_range']['end']}"}
        good = http_request("GET", entry["url"], asked).body
        self.hub.set_faults([{"path": f"xorbs/{xorb}", "kind": "flip", "offset": entry["url_range"]["start"] + 20,
                              "target": "xorb"}])
        flipped = http_request("GET", entry["url"], asked).body
        self.assertEqual(sum(a != b for a, b in zip(good, flipped)), 1)
        self.hub.set_faults([{"path": "xorbs/*", "kind": "expire", "target": "xorb"}])
        self.assertEqual(http_request("GET", entry["url"], asked).status, 403)
        self.hub.set_faults([{"path": "xorbs/*", "kind": "status", "status": 503, "target": "xorb"}])
        self.assertEqual(http_request("GET", entry["url"], asked).status, 503)
        self.hub.set_faults([{"path": "xorbs/*", "kind": "short", "after_bytes": 100, "target": "xorb"}])
        self.assertEqual(len(http_request("GET", entry["url"], asked).body), 100)


@unittest.skipIf(npm_client_missing() is not None, npm_client_missing() or "")
class XetExpiryAndVisibilityTest(HfgetTestCase):
    """Short-lived tokens and URLs, a private repo, and a repo served without Xet."""

    PRIVATE, HIDDEN = "xet-org/private", "xet-org/hidden"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.workdir / "small"
        cls.source.mkdir()
        (cls.source / "weights.safetensors").write_bytes(random.Random(7).randbytes(300 * KIB))
        cls.hub = cls.start_hub({}, xet=True, xet_token_ttl=2, url_ttl=2, xet_repos=[cls.PRIVATE, cls.HIDDEN],
                                private={cls.PRIVATE: XET_WRITER_TOKEN}, xet_hide=[cls.HIDDEN])
        cls.private = cls.hub.xet_upload(cls.source, cls.PRIVATE)
        cls.hidden = cls.hub.xet_upload(cls.source, cls.HIDDEN)

    def test_expired_token_and_url(self):
        token = self.hub.api(f"/api/models/{self.PRIVATE}/xet-read-token/main", XET_WRITER_TOKEN).json()
        url = f"{self.hub.cas_url}/v1/reconstructions/{self.private.xet_hashes['weights.safetensors']}"
        answer = http_request("GET", url, bearer(token["accessToken"]))
        self.assertEqual(answer.status, 200)
        entry = next(iter(answer.json()["fetch_info"].values()))[0]
        time.sleep(3.2)
        self.assertEqual(http_request("GET", url, bearer(token["accessToken"])).status, 401)
        asked = {"Range": f"bytes={entry['url_range']['start']}-{entry['url_range']['end']}"}
        self.assertEqual(http_request("GET", entry["url"], asked).status, 403)

    def test_private_repo_needs_the_hub_token(self):
        self.assertEqual(self.hub.api(f"/api/models/{self.PRIVATE}/xet-read-token/main").status, 401)
        self.assertEqual(self.hub.api(f"/api/models/{self.PRIVATE}/xet-read-token/main", XET_WRITER_TOKEN).status,
                         200)

    def test_hidden_repo_is_served_as_lfs_only(self):
        self.assertTrue(self.hidden.xet_hashes == {})
        response = http_request("GET", f"{self.hub.url}/{self.HIDDEN}/resolve/main/weights.safetensors")
        self.assertEqual(response.status, 302)
        self.assertNotIn("X-Xet-Hash", response.headers)
        self.assertEqual(sha256(http_request("GET", response.headers["Location"]).body),
                         sha256((self.source / "weights.safetensors").read_bytes()))


if __name__ == "__main__":
    unittest.main()
