"""Hostile JSON (security issue 14, items 5 and 6): every JSON document hfget parses from the network or from a
downloaded file costs bounded memory and linear time, whatever its size or shape, with the real binary.

- A tree page whose one entry carries a million empty objects in a field hfget does not use downloads in
  seconds (nlohmann's callback parser rescanned the parent after every object: minutes).
- A 62 MB revision answer of nested arrays is refused with one clear error, in bounded memory (a DOM of it
  took 2.27 GB).
- `hfget verify` of a model whose safetensors headers are ~90 MB each and whose index is ~120 MB, valid
  (millions of tensors) or nested to death, finishes in bounded memory (DOMs of them took 3.3 and 4.4 GB).

Peak RSS is hfget's own VmHWM (test_hostile_server.run_measured) and is not asserted in sanitizer builds,
where it means nothing. (The big files are still written here in small pieces, so that this process stays
small too.) The revision answer comes from a small standard-library server of this
file (loopback, one canned answer); the tree page from the emulator's crafted pages (POST
/_emulator/tree-pages, tests/hub/README.md).
"""

from __future__ import annotations

import http.server
import json
import os
import struct
import threading
import unittest
from pathlib import Path

import test_hostile_server as hostile
from support import HfgetTestCase

GIT_OID = "0123456789abcdef0123456789abcdef01234567"
MB = 1000 * 1000
EXIT_NETWORK = 7
EXIT_VERIFICATION_FAILED = 8


def rss_checked(test: unittest.TestCase, rss_mb: int, what: str) -> None:
    if not hostile.SANITIZER_BUILD:
        test.assertLessEqual(rss_mb, hostile.MAX_RSS_MB, f"{what}: hfget peaked at {rss_mb} MiB RSS")


# ------------------------------------------------------------------------------------------- tree page

class HostileTreePageTest(hostile.HostileTestCase):
    """The emulator serves the real listing, one of its entries padded with what hfget must skip."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        response = cls.hub.api(f"/api/models/{hostile.REPO}/tree/{cls.commit}?recursive=true", token=hostile.TOKEN)
        cls.real_entries = response.json()

    def serve_padded(self, unit: str, count: int) -> None:
        """The real listing, its first entry given an unused field "junk": [unit × count]."""
        first = json.dumps(self.real_entries[0])
        rest = "".join(", " + json.dumps(entry) for entry in self.real_entries[1:])
        self.hub.set_tree_pages(hostile.REPO, [{"repeat": {
            "prefix": "[" + first[:-1] + ', "junk": [', "unit": unit + ", ", "count": count - 1,
            "suffix": unit + "]}" + rest + "]"}}])

    def test_a_million_empty_objects_in_an_unused_field_download_in_seconds(self):
        self.serve_padded("{}", 1_000_000)   # a 4 MB page
        result, target, _ = self.run_contained(mode="local")
        self.assertSucceeded(result)
        self.assertLess(result.elapsed, 20, "linear: the parse takes well under a second")
        self.assertLocalDir(target, self.commit, self.source)

    def test_a_million_nested_arrays_in_an_unused_field_are_refused_at_once(self):
        self.hub.set_tree_pages(hostile.REPO, [{"repeat": {
            "prefix": '[{"type": "file", "path": "a.bin", "size": 1, "oid": "' + GIT_OID + '", "junk": ',
            "unit": "[", "count": 1_000_000, "suffix": ""}}])
        result, target, _ = self.run_contained(mode="local")
        self.assertOneClearError(result, EXIT_NETWORK, "tree listing", "nested too deeply")
        self.assertOnlyBookkeeping(target)

    def test_an_object_body_says_it_is_not_an_array(self):
        self.hub.set_tree_pages(hostile.REPO, [{"body": json.dumps({"error": "nope", "entries": []})}])
        result, target, _ = self.run_contained(mode="local")
        self.assertOneClearError(result, EXIT_NETWORK, "tree listing", "the body is not a JSON array")
        self.assertOnlyBookkeeping(target)


# ---------------------------------------------------------------------------------------- revision info

class CannedRevisionServer:
    """A Hub of one answer: GET …/revision/… gets `prefix + unit × count + suffix` (streamed, 1 MiB at a time);
    anything else a 404. Loopback only; it serves until stop()."""

    def __init__(self, prefix: str, unit: str, count: int, suffix: str) -> None:
        body = (prefix.encode(), unit.encode(), count, suffix.encode())
        self.revision_requests = 0
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if "/revision/" not in self.path:
                    payload = b'{"error": "not here"}'
                    self.send_response(404)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                server.revision_requests += 1
                head, unit, count, tail = body
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(head) + len(unit) * count + len(tail)))
                self.end_headers()
                try:
                    self.wfile.write(head)
                    per_chunk = max(1, (1 << 20) // len(unit))
                    chunk = unit * per_chunk
                    for _ in range(count // per_chunk):
                        self.wfile.write(chunk)
                    self.wfile.write(unit * (count % per_chunk) + tail)
                except (BrokenPipeError, ConnectionResetError):
                    pass   # hfget stopped reading: what the test wants

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)


class HostileRevisionInfoTest(HfgetTestCase):
    def run_download(self, server: CannedRevisionServer):
        home = self.workdir / f"home-{self.id().rsplit('.', 1)[-1]}"
        home.mkdir()
        target = self.workdir / f"target-{self.id().rsplit('.', 1)[-1]}"
        return hostile.run_measured(["download", "org/model", "--local-dir", target, "--retries", "1"],
                                    endpoint=server.url, home=home, timeout=60)

    def test_62_mb_of_nested_arrays_are_refused_in_bounded_memory(self):
        # A valid sha, then 31 M nested arrays: 62 MB, under the 64 MiB a Hub answer may have.
        server = CannedRevisionServer('{"sha": "' + GIT_OID + '", "x": ', "[", 31_000_000, "")
        self.addCleanup(server.stop)
        result, rss_mb = self.run_download(server)
        self.assertEqual(result.code, EXIT_NETWORK, result.describe())
        errors = [line for line in result.stderr.splitlines() if line.startswith("hfget: error:")]
        self.assertEqual(len(errors), 1, result.describe())
        self.assertIn("malformed repo info: nested more than 64 levels deep", errors[0])
        self.assertLess(result.elapsed, 30)
        rss_checked(self, rss_mb, "62 MB revision answer")


# -------------------------------------------------------------------------------------------- verify

def write_safetensors(path: Path, pieces, data_length: int) -> int:
    """A safetensors file whose header is the concatenation of `pieces` (written as they come, the 8-byte length
    filled in after) and whose data region is `data_length` zero bytes; returns the header's length."""
    with open(path, "wb") as out:
        out.write(b"\0" * 8)
        length = 0
        for piece in pieces:
            data = piece.encode()
            out.write(data)
            length += len(data)
        out.truncate(8 + length + data_length)   # zero bytes, sparse
        out.seek(0)
        out.write(struct.pack("<Q", length))
    return length


def write_text(path: Path, pieces) -> int:
    length = 0
    with open(path, "w") as out:
        for piece in pieces:
            out.write(piece)
            length += len(piece)
    return length


def in_chunks(count: int, piece, size: int = 50_000):
    """piece(i) for i in range(count), joined by commas, yielded `size` at a time."""
    for start in range(0, count, size):
        yield ("," if start else "") + ",".join(piece(i) for i in range(start, min(count, start + size)))


def write_model_files(root: Path) -> None:
    (root / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}))
    (root / "tokenizer.json").write_text(json.dumps({"version": "1.0", "model": {"type": "BPE"}}))


class HostileWeightsVerifyTest(HfgetTestCase):
    """`hfget verify DIR --revision COMMIT` of models written here (no download: verify reads the files)."""

    SHARDS = 2
    # A ~90 MB header each; the index maps all 2.3 M: ~120 MB. Under ASan (a Debug build some 20x slower, and
    # where RSS means nothing, so memory is not what it checks) a tenth of that: the same code paths.
    SCALE = 10 if hostile.SANITIZER_BUILD else 1
    TENSORS_PER_SHARD = 1_150_000 // SCALE

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.valid = cls.workdir / "valid"
        cls.valid.mkdir()
        write_model_files(cls.valid)
        names = [f"model-{n:05d}-of-{cls.SHARDS:05d}.safetensors" for n in range(1, cls.SHARDS + 1)]
        cls.header_sizes = []
        for shard, name in enumerate(names):
            first = shard * cls.TENSORS_PER_SHARD

            def tensor(i: int, first=first) -> str:
                return f'"layers.{first + i:07d}.weight":{{"dtype":"U8","shape":[1],"data_offsets":[{i},{i + 1}]}}'

            cls.header_sizes.append(write_safetensors(
                cls.valid / name, ["{", *in_chunks(cls.TENSORS_PER_SHARD, tensor), "}"], cls.TENSORS_PER_SHARD))
        total = cls.SHARDS * cls.TENSORS_PER_SHARD

        def entry(i: int) -> str:
            return f'"layers.{i:07d}.weight":"{names[i // cls.TENSORS_PER_SHARD]}"'

        # Sorted by name, as transformers writes it (json.dumps(sort_keys=True)).
        cls.index_size = write_text(cls.valid / "model.safetensors.index.json", [
            f'{{"metadata":{{"total_size":{total}}},"weight_map":{{', *in_chunks(total, entry), "}}"])

        # The same sizes, nested: 90 M brackets in the header's metadata, 120 M in the index's.
        cls.nested = cls.workdir / "nested"
        cls.nested.mkdir()
        write_model_files(cls.nested)
        nested_name = "model-00001-of-00001.safetensors"
        brackets = "[" * MB   # written 1 MB at a time: this process's own peak RSS would count in wait4's
        write_safetensors(cls.nested / nested_name, ['{"__metadata__":{"x":', *[brackets] * 90], 0)
        write_text(cls.nested / "model.safetensors.index.json",
                   ['{"weight_map":{"a":"' + nested_name + '"},"metadata":{"x":', *[brackets] * 120])

    def verify(self, root: Path):
        home = self.workdir / f"home-{self.id().rsplit('.', 1)[-1]}"
        home.mkdir(exist_ok=True)
        return hostile.run_measured(["verify", root, "--revision", GIT_OID, "--json"], endpoint="http://127.0.0.1:9",
                                    home=home, timeout=120)

    def test_90_mb_headers_and_a_120_mb_index_of_millions_of_tensors_pass_in_bounded_memory(self):
        self.assertGreater(min(self.header_sizes), 85 * MB // self.SCALE)
        self.assertGreater(self.index_size, 115 * MB // self.SCALE)
        result, rss_mb = self.verify(self.valid)
        self.assertEqual(result.code, 0, result.describe())
        report = json.loads(result.stdout)
        checks = {check["name"]: check for check in report["checks"]}
        self.assertEqual(checks["shard_set"]["status"], "pass", checks["shard_set"])
        self.assertEqual(checks["safetensors_headers"]["detail"],
                         f"{self.SHARDS} file(s), {self.SHARDS * self.TENSORS_PER_SHARD} tensors, "
                         "spans exact and contiguous")
        rss_checked(self, rss_mb, "verify of 2 x 90 MB headers and a 120 MB index")

    def test_a_nested_header_and_index_are_refused_in_bounded_memory(self):
        result, rss_mb = self.verify(self.nested)
        self.assertEqual(result.code, EXIT_VERIFICATION_FAILED, result.describe())
        problems = {(p["path"], p["check"], p["cause"]) for p in json.loads(result.stdout)["problems"]}
        self.assertIn(("model-00001-of-00001.safetensors", "safetensors_headers",
                       "the header is nested more than 16 levels deep"), problems)
        self.assertIn(("model.safetensors.index.json", "shard_set", "the index is nested more than 32 levels deep"),
                      problems)
        self.assertLess(result.elapsed, 10, "refused at the 17th (33rd) bracket, not after reading them all")
        rss_checked(self, rss_mb, "verify of nested header and index")


if __name__ == "__main__":
    unittest.main()
