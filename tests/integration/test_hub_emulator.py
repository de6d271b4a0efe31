"""Self-test of the test infrastructure, without hfget: the emulator's answers match hashlib over the source
files and HUB-PROTOCOL.md, pagination links work, faults are injected as asked, nginx serves signed URLs,
and the model generator writes valid safetensors."""

from __future__ import annotations

import hashlib
import http.client
import json
import socket
import struct
import threading
import time
import unittest
from pathlib import Path
from urllib.parse import quote, urlsplit

from harness import CDN_HOST, FIXTURES, KIB, Hub, http_request, source_files, wait_until
from support import HfgetTestCase

REPO = "emu-org/emu-model"
TOKEN = "hf_private_token_for_emulator_selftest"


def fetch_via_redirect(hub: Hub, path: str, headers: dict | None = None):
    """GET /resolve/ and, for a 302, the CDN URL without the Authorization header (as a client must)."""
    first = http_request("GET", f"{hub.url}/{REPO}/resolve/main/{quote(path)}", headers)
    if first.status != 302:
        return first
    return http_request("GET", first.headers["Location"])


class EmulatorApiTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=2, shard_size=100 * KIB, odd_names=True)
        cls.files = source_files(cls.source)
        cls.hub = cls.start_hub({REPO: cls.source, "dataset:emu-org/emu-data": cls.source,
                                 f"{REPO}@dev": cls.make_model("dev", shards=1, shard_size=8 * KIB, seed=7)},
                                cdn="emulator", page_size=3, tags={f"{REPO}@v1.0": "dev"},
                                private={"dataset:emu-org/emu-data": TOKEN})

    def list_tree(self, repo_path: str, revision: str, token: str | None = None) -> tuple[list[dict], int]:
        url = f"{self.hub.url}/api/{repo_path}/tree/{quote(revision, safe='')}?recursive=true&expand=false"
        entries, pages = [], 0
        while url and pages < 100:
            response = http_request("GET", url, {"Authorization": f"Bearer {token}"} if token else {})
            self.assertEqual(response.status, 200, response.body)
            entries += response.json()
            pages += 1
            link = response.headers.get("Link")
            url = link[link.index("<") + 1:link.index(">")] if link else None
            if link:
                self.assertTrue(link.endswith('rel="next"'))
        return entries, pages

    def test_repo_info_gives_commit_and_siblings(self):
        info = self.hub.api(f"/api/models/{REPO}/revision/main").json()
        self.assertRegex(info["sha"], r"^[0-9a-f]{40}$")
        self.assertEqual(sorted(s["rfilename"] for s in info["siblings"]), sorted(self.files))
        self.assertEqual(self.hub.api(f"/api/models/{REPO}").json()["sha"], info["sha"])
        self.assertIs(info["private"], False)

    def test_revisions_resolve_by_branch_tag_sha_and_short_sha(self):
        dev = self.hub.commit(REPO, "dev")
        self.assertNotEqual(dev, self.hub.commit(REPO, "main"))
        self.assertEqual(self.hub.commit(REPO, "v1.0"), dev)
        self.assertEqual(self.hub.commit(REPO, dev), dev)
        self.assertEqual(self.hub.commit(REPO, dev[:8]), dev)
        missing = self.hub.api(f"/api/models/{REPO}/revision/nope")
        self.assertEqual((missing.status, missing.headers["X-Error-Code"]), (404, "RevisionNotFound"))

    def test_tree_entries_match_hashlib_and_pages_link_to_each_other(self):
        commit = self.hub.commit(REPO)
        entries, pages = self.list_tree(f"models/{REPO}", commit)
        files = {e["path"]: e for e in entries if e["type"] == "file"}
        self.assertEqual(pages, -(-len(entries) // 3))
        self.assertEqual(len(entries), len({e["path"] for e in entries}), "no entry twice across pages")
        self.assertEqual(sorted(files), sorted(self.files))
        self.assertIn({"type": "directory", "path": "extra/nested"},
                      [{"type": e["type"], "path": e["path"]} for e in entries])
        for path, entry in files.items():
            data = (self.source / path).read_bytes()
            sha256 = hashlib.sha256(data).hexdigest()
            self.assertEqual(entry["size"], len(data))
            if "lfs" in entry:
                pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {len(data)}\n"
                self.assertEqual(entry["lfs"], {"oid": sha256, "size": len(data), "pointerSize": len(pointer)})
                self.assertEqual(entry["oid"], hashlib.sha1(b"blob %d\0%s" % (len(pointer), pointer.encode())).hexdigest())
            else:
                self.assertEqual(entry["oid"], hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest())
        self.assertIn("lfs", files["model-00001-of-00002.safetensors"])
        self.assertIn("lfs", files["tokenizer.json"], "files over 64 KiB are LFS")
        self.assertIn("lfs", files["extra/nested/data.bin"], "*.bin is LFS whatever its size")
        self.assertNotIn("lfs", files["config.json"])

    def test_regular_file_resolve_has_etag_commit_and_ranges(self):
        commit = self.hub.commit(REPO)
        data = (self.source / "config.json").read_bytes()
        url = f"{self.hub.url}/{REPO}/resolve/{commit}/config.json"
        head = http_request("HEAD", url, {"Accept-Encoding": "identity"})
        self.assertEqual(head.status, 200)
        self.assertEqual(head.headers["ETag"], f'"{self.files["config.json"].content_oid}"')
        self.assertEqual(head.headers["X-Repo-Commit"], commit)
        self.assertEqual(int(head.headers["Content-Length"]), len(data))
        self.assertEqual(http_request("GET", url).body, data)
        part = http_request("GET", url, {"Range": "bytes=5-"})
        self.assertEqual((part.status, part.body, part.headers["Content-Range"]),
                         (206, data[5:], f"bytes 5-{len(data) - 1}/{len(data)}"))
        self.assertEqual(http_request("GET", url, {"Range": "bytes=2-4"}).body, data[2:5])
        self.assertEqual(http_request("GET", url, {"Range": f"bytes={len(data)}-"}).status, 416)

    def test_range_on_an_empty_file_is_unsatisfiable(self):
        # RFC 9110 §14.1.1: a zero-length representation satisfies no first-byte range; AWS S3 answers 416
        # InvalidRange with Content-Range: bytes */0 (nginx ignores the Range and answers 200: also allowed).
        url = f"{self.hub.url}/{REPO}/resolve/main/extra/empty.txt"
        self.assertEqual(self.files["extra/empty.txt"].size, 0)
        probe = http_request("GET", url, {"Range": "bytes=0-0"})
        self.assertEqual((probe.status, probe.headers["Content-Range"], probe.body), (416, "bytes */0", b""))
        whole = http_request("GET", url)
        self.assertEqual((whole.status, whole.headers["Content-Length"], whole.body), (200, "0", b""))
        self.assertEqual(whole.headers["ETag"], f'"{self.files["extra/empty.txt"].content_oid}"')

    def paths_info(self, repo_path: str, revision: str, body: bytes, content_type: str,
                   token: str | None = None):
        headers = {"Content-Type": content_type, **({"Authorization": f"Bearer {token}"} if token else {})}
        return http_request("POST", f"{self.hub.url}/api/{repo_path}/paths-info/{quote(revision, safe='')}",
                            headers, body)

    def test_paths_info_answers_json_and_form_bodies_like_the_tree(self):
        commit = self.hub.commit(REPO)
        tree = {e["path"]: e for e in self.list_tree(f"models/{REPO}", commit)[0]}
        asked = ["model-00001-of-00002.safetensors", "config.json", "extra/nested", "no/such/file"]
        as_json = self.paths_info(f"models/{REPO}", commit, json.dumps({"paths": asked}).encode(),
                                  "application/json")
        self.assertEqual(as_json.status, 200, as_json.body)
        # Missing paths are left out; files and folders are the tree's own entries, in the order asked.
        self.assertEqual(as_json.json(), [tree[p] for p in asked[:3]])
        form = "&".join(f"paths={quote(p, safe='')}" for p in asked) + "&expand=false"
        as_form = self.paths_info(f"models/{REPO}", "main", form.encode(), "application/x-www-form-urlencoded")
        self.assertEqual(as_form.json(), as_json.json())

    def test_paths_info_expand_adds_the_last_commit(self):
        commit = self.hub.commit(REPO)
        body = json.dumps({"paths": ["config.json", "docs"], "expand": True}).encode()
        entries = self.paths_info(f"models/{REPO}", "main", body, "application/json").json()
        self.assertEqual([e["path"] for e in entries], ["config.json", "docs"])
        for entry in entries:
            self.assertEqual(entry["lastCommit"]["id"], commit)
            self.assertRegex(entry["lastCommit"]["date"], r"^\d{4}-\d\d-\d\dT")
        self.assertEqual(entries[0]["securityFileStatus"]["status"], "safe")
        self.assertNotIn("securityFileStatus", entries[1])

    def test_paths_info_errors_and_access_rules(self):
        body = json.dumps({"paths": ["config.json"]}).encode()
        missing_rev = self.paths_info(f"models/{REPO}", "nope", body, "application/json")
        self.assertEqual((missing_rev.status, missing_rev.headers["X-Error-Code"]), (404, "RevisionNotFound"))
        for bad in (b"{}", b'{"paths": "x", "expand": "yes"}', b"[1]", b"not json"):
            self.assertEqual(self.paths_info(f"models/{REPO}", "main", bad, "application/json").status, 400, bad)
        self.assertEqual(self.paths_info(f"datasets/emu-org/emu-data", "main", body, "application/json").status, 401)
        private = self.paths_info("datasets/emu-org/emu-data", "main", body, "application/json", TOKEN)
        self.assertEqual([e["path"] for e in private.json()], ["config.json"])
        self.assertEqual(http_request("POST", f"{self.hub.url}/api/models/{REPO}/tree/main", {}, b"x").status, 404)

    def test_lfs_resolve_redirects_to_a_signed_url_on_another_host(self):
        f = self.files["model-00001-of-00002.safetensors"]
        head = http_request("HEAD", f"{self.hub.url}/{REPO}/resolve/main/{f.path}", {"Authorization": f"Bearer {TOKEN}"})
        self.assertEqual(head.status, 302)
        location = head.headers["Location"]
        self.assertEqual(urlsplit(location).hostname, CDN_HOST)
        self.assertNotIn(TOKEN, location)
        self.assertEqual(head.headers["X-Linked-Etag"], f'"{f.sha256}"')
        self.assertEqual(int(head.headers["X-Linked-Size"]), f.size)
        self.assertNotEqual(int(head.headers["Content-Length"]), f.size, "a 302's length is its own body's")
        body = http_request("GET", location)
        self.assertEqual((body.status, hashlib.sha256(body.body).hexdigest()), (200, f.sha256))
        self.assertEqual(http_request("GET", location, {"Range": "bytes=8-15"}).body, body.body[8:16])
        forged = location.replace("Expires=", "Expires=1")
        self.assertEqual(http_request("GET", forged).status, 403)

    def test_percent_encoded_names_resolve(self):
        for name in ("docs/notes with space.md", "docs/ünïcödé+plus#hash.txt"):
            response = http_request("GET", f"{self.hub.url}/{REPO}/resolve/main/{quote(name)}")
            self.assertEqual(response.status, 200, name)
            self.assertEqual(response.body, (self.source / name).read_bytes())

    def test_errors_carry_the_hub_error_codes(self):
        cases = {
            "/api/models/emu-org/missing/revision/main": (401, "RepoNotFound"),
            f"/{REPO}/resolve/main/missing.txt": (404, "EntryNotFound"),
            f"/{REPO}/resolve/nope/config.json": (404, "RevisionNotFound"),
            "/api/datasets/emu-org/emu-data/revision/main": (401, "RepoNotFound"),  # private, no token
        }
        for path, (status, code) in cases.items():
            response = self.hub.api(path)
            self.assertEqual((response.status, response.headers.get("X-Error-Code")), (status, code), path)
        rejected = self.hub.api(f"/api/models/{REPO}/revision/main", token="hf_wrong")
        self.assertEqual(rejected.status, 401)
        self.assertEqual(rejected.headers["X-Error-Message"], "Invalid credentials in Authorization header")
        self.assertEqual(self.hub.api("/api/models/emu-org/missing/revision/main", token=TOKEN).status, 404)

    def test_private_dataset_needs_its_token_and_uses_the_datasets_prefix(self):
        self.assertEqual(self.hub.api("/api/datasets/emu-org/emu-data/revision/main", token=TOKEN).status, 200)
        resolve = http_request("GET", f"{self.hub.url}/datasets/emu-org/emu-data/resolve/main/config.json",
                               {"Authorization": f"Bearer {TOKEN}"})
        self.assertEqual(resolve.body, (self.source / "config.json").read_bytes())
        entries, _ = self.list_tree("datasets/emu-org/emu-data", "main", TOKEN)
        self.assertEqual(sorted(e["path"] for e in entries if e["type"] == "file"), sorted(self.files))

    def test_request_log_records_presence_of_authorization_but_never_its_value(self):
        self.hub.api("/api/datasets/emu-org/emu-data/revision/main", token=TOKEN)
        records = self.hub.requests()
        self.assertTrue(any(r["has_authorization"] for r in records))
        self.assertNotIn(TOKEN, json.dumps(records))
        self.assertNotIn(TOKEN, (self.hub.tmp / "requests.jsonl").read_text())


class EmulatorFaultTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=1, shard_size=200 * KIB)
        cls.hub = cls.start_hub({REPO: cls.source}, cdn="emulator")
        cls.shard = "model-00001-of-00001.safetensors"
        cls.data = (cls.source / cls.shard).read_bytes()

    def setUp(self):
        self.hub.clear_faults()

    def test_drop_truncates_the_body(self):
        self.hub.set_faults([{"path": "*.safetensors", "kind": "drop", "after_bytes": 1000}])
        with self.assertRaises(http.client.IncompleteRead) as raised:
            fetch_via_redirect(self.hub, self.shard)
        self.assertEqual(len(raised.exception.partial), 1000)
        self.assertEqual(fetch_via_redirect(self.hub, self.shard).body, self.data, "times defaults to 1")

    def test_status_fault_answers_with_retry_after(self):
        self.hub.set_faults([{"path": "config.json", "kind": "status", "status": 429, "retry_after": 2, "times": 2}])
        for _ in range(2):
            response = fetch_via_redirect(self.hub, "config.json")
            self.assertEqual((response.status, response.headers["Retry-After"]), (429, "2"))
        self.assertEqual(fetch_via_redirect(self.hub, "config.json").status, 200)

    def test_flip_corrupts_one_byte_at_the_offset(self):
        self.hub.set_faults([{"path": self.shard, "kind": "flip", "offset": 4242}])
        body = fetch_via_redirect(self.hub, self.shard).body
        self.assertEqual(len(body), len(self.data))
        self.assertEqual([i for i in range(len(body)) if body[i] != self.data[i]], [4242])

    def test_stall_pauses_then_closes(self):
        self.hub.set_faults([{"path": self.shard, "kind": "stall", "after_bytes": 10, "seconds": 0.5}])
        started = time.monotonic()
        with self.assertRaises(http.client.IncompleteRead):
            fetch_via_redirect(self.hub, self.shard)
        self.assertGreaterEqual(time.monotonic() - started, 0.45)

    def test_a_request_that_began_before_a_reset_is_not_in_the_log_after_it(self):
        # As a killed client's request is: it ends, and is logged, only after the test has reset the log.
        self.hub.set_faults([{"path": self.shard, "kind": "stall", "after_bytes": 10, "seconds": 1.0}])
        stalled = threading.Thread(target=lambda: self.assertRaises(http.client.IncompleteRead, fetch_via_redirect,
                                                                    self.hub, self.shard))
        stalled.start()
        try:
            deadline = time.monotonic() + 10
            while self.hub.stats()["faults_injected"].get("stall", 0) == 0 and time.monotonic() < deadline:
                time.sleep(0.02)
            self.hub.reset_logs()
        finally:
            stalled.join(timeout=10)
        self.assertEqual(fetch_via_redirect(self.hub, "config.json").status, 200)
        # A request is logged after its answer went out: the client can read it before the record is there.
        paths = wait_until(lambda: [r["path"] for r in self.hub.requests()], timeout=10,
                           what="the request after the reset in the log")
        self.assertTrue(all(path.endswith("/config.json") for path in paths), paths)

    def test_stats_count_open_connections_until_the_client_side_closes(self):
        # A request already sent on a kept-alive connection is answered after the client is gone.
        host, port = urlsplit(self.hub.url).hostname, urlsplit(self.hub.url).port
        client = socket.create_connection((host, port), timeout=10)
        try:
            wait_until(lambda: self.hub.stats()["open_connections"] == 1, timeout=10, what="the connection counted")
            client.sendall(f"GET /{REPO}/resolve/main/config.json HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        finally:
            client.close()
        wait_until(lambda: self.hub.stats()["open_connections"] == 0, timeout=10, what="the connection closed")
        wait_until(lambda: any(r["path"].endswith("/config.json") for r in self.hub.requests()), timeout=10,
                   what="the request of the closed connection answered and logged")

    def test_expire_makes_a_signed_url_single_use(self):
        self.hub.set_faults([{"path": self.shard, "kind": "expire"}])
        location = http_request("GET", f"{self.hub.url}/{REPO}/resolve/main/{self.shard}").headers["Location"]
        self.assertEqual(http_request("GET", location, {"Range": "bytes=0-9"}).status, 206)
        self.assertEqual(http_request("GET", location, {"Range": "bytes=10-19"}).status, 403)
        fresh = http_request("GET", f"{self.hub.url}/{REPO}/resolve/main/{self.shard}").headers["Location"]
        self.assertNotEqual(fresh, location, "every resolve hands out a new URL")
        self.assertEqual(http_request("GET", fresh).body, self.data)

    def test_stats_count_injected_faults_and_delete_clears_them(self):
        before = self.hub.stats()["faults_injected"]
        self.hub.set_faults([{"path": "config.json", "kind": "status", "status": 500, "times": -1}])
        for _ in range(3):
            self.assertEqual(fetch_via_redirect(self.hub, "config.json").status, 500)
        self.assertEqual(self.hub.stats()["faults_injected"]["status"], before["status"] + 3)
        self.hub.clear_faults()
        self.assertEqual(fetch_via_redirect(self.hub, "config.json").status, 200)

    def test_invalid_rules_are_rejected(self):
        response = http_request("POST", f"{self.hub.url}/_emulator/faults", {},
                                json.dumps([{"path": "*", "kind": "explode"}]).encode())
        self.assertEqual(response.status, 400)


class NginxCdnTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=1, shard_size=300 * KIB)
        cls.hub = cls.start_hub({REPO: cls.source}, cdn="nginx")

    def test_nginx_serves_signed_urls_with_ranges_and_logs_them(self):
        shard = "model-00001-of-00001.safetensors"
        data = (self.source / shard).read_bytes()
        self.hub.reset_logs()
        location = http_request("GET", f"{self.hub.url}/{REPO}/resolve/main/{shard}").headers["Location"]
        self.assertTrue(location.startswith(self.hub.cdn_url + "/"))
        self.assertEqual(http_request("GET", location).body, data)
        self.assertEqual(http_request("GET", location, {"Range": "bytes=100-"}).body, data[100:])
        if not self.hub._nginx.checks_signatures:
            self.skipTest("this nginx has no secure_link module")
        self.assertEqual(http_request("GET", location.split("?")[0]).status, 403, "unsigned URLs are refused")
        log = self.hub.cdn_requests()
        self.assertEqual([(r["status"], r["bytes"], r["range"]) for r in log],
                         [(200, len(data), None), (206, len(data) - 100, "bytes=100-"), (403, log[2]["bytes"], None)])


class ModelGeneratorTest(unittest.TestCase):
    def test_shards_are_valid_safetensors_and_the_index_adds_up(self):
        import tempfile
        from harness import make_model
        with tempfile.TemporaryDirectory() as out:
            make_model(out, shards=3, shard_size=50 * KIB, seed=3)
            index = json.loads(Path(out, "model.safetensors.index.json").read_text())
            total = 0
            for shard in sorted(set(index["weight_map"].values())):
                raw = Path(out, shard).read_bytes()
                (header_length,) = struct.unpack("<Q", raw[:8])
                self.assertEqual(header_length % 8, 0, "data region starts 8-byte aligned")
                header = json.loads(raw[8:8 + header_length])
                self.assertEqual(header.pop("__metadata__"), {"format": "pt"})
                spans = sorted(t["data_offsets"] for t in header.values())
                self.assertEqual(spans[0][0], 0)
                for (_, end), (start, _) in zip(spans, spans[1:]):
                    self.assertEqual(end, start, "tensors are contiguous")
                self.assertEqual(spans[-1][1], len(raw) - 8 - header_length, "tensors cover the data region")
                total += spans[-1][1]
                self.assertTrue(all(index["weight_map"][name] == shard for name in header))
            self.assertEqual(index["metadata"]["total_size"], total)

    def test_real_writer_fixtures_are_vendored(self):
        real = FIXTURES / "real-writers"
        self.assertTrue((real / "README.md").is_file())
        self.assertTrue((real / "dtype-zoo.safetensors").is_file())
        self.assertEqual(len(list((real / "tiny-llama-sharded").glob("*.safetensors"))), 4)


if __name__ == "__main__":
    unittest.main()
