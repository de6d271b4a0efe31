"""Chunk-level reuse across revisions over Xet (issue 19): a second revision fetches only what changed.

The test Hub's CAS holds two revisions of one repo, both written by the real JS Xet writer
(`@huggingface/hub` uploadFiles), revision 2 uploaded after revision 1 and deduplicated against it through
the CAS's global-dedup query, as the Hub's writers do: one shard replaced, and in every other shard a few
spans ("tensors") changed. hfget downloads revision 1, then revision 2 into the same target; the xorb bytes
of the second run must be about the bytes that changed, and the result byte-identical. Also: the same with
--no-chunk-reuse (everything fetched), an old copy edited in between (the new file is still right), and a
target without hfget's records (a full fetch).
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import struct
import unittest
from pathlib import Path

from harness import KIB, MIB, http_request, source_files, wait_until
from support import HfgetTestCase, files_under

REPO = "org/reuse-model"
SHARDS = 4
SHARD_SIZE = 2 * MIB
SPAN = 128 * KIB          # one changed "tensor"
SPANS_PER_SHARD = 2


class XetReuseTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.v1 = cls.make_model("v1", shards=SHARDS, shard_size=SHARD_SIZE, seed=11)
        cls.v2 = cls.workdir / "v2"
        shutil.copytree(cls.v1, cls.v2)
        draw = random.Random(19)
        shards = sorted(p for p in cls.v2.iterdir() if p.name.endswith(".safetensors"))
        cls.changed = 0
        for number, shard in enumerate(shards):
            data = bytearray(shard.read_bytes())
            start = 8 + struct.unpack_from("<Q", data)[0]   # the tensors' bytes: the header stays valid
            if number == 1:                                   # a shard re-trained: every tensor other bytes
                data[start:] = draw.randbytes(len(data) - start)
                cls.changed += len(data) - start
            else:                                             # a few tensors changed in the others
                for k in range(SPANS_PER_SHARD):
                    at = start + (k + 1) * (len(data) - start) // (SPANS_PER_SHARD + 1)
                    data[at:at + SPAN] = draw.randbytes(SPAN)
                    cls.changed += SPAN
            shard.write_bytes(bytes(data))
        cls.model_bytes = sum(f.size for f in source_files(cls.v2).values())
        cls.hub = cls.start_hub({}, xet=True)
        cls.rev1 = cls.hub.xet_upload(cls.v1, REPO).commit
        cls.rev2 = cls.hub.xet_upload(cls.v2, REPO).commit

    def setUp(self):
        self.hub.clear_faults()

    def download(self, target: Path, revision: str, layout: str, *extra: str):
        where = ["--local-dir", str(target)] if layout == "local" else ["--cache-dir", str(target)]
        self.hub.reset_logs()
        result = self.hub.run_hfget(["download", REPO, "--revision", revision, *where, "--json", *extra])
        self.assertEqual(result.code, 0, result.stderr[-3000:])
        return json.loads(result.stdout)

    def xorb_bytes(self) -> int:
        return sum(r["bytes_sent"] for r in self.hub.requests() if r["listener"] == "xorb")

    def assertHolds(self, document: dict, source: Path) -> None:
        root = Path(document["snapshot_path"])
        for path in source_files(source):
            self.assertEqual((root / path).read_bytes(), (source / path).read_bytes(), path)

    def update(self, layout: str, *extra: str, between=None) -> dict:
        target = self.hub.new_dir(layout)
        first = self.download(target, self.rev1, layout)
        self.assertHolds(first, self.v1)
        if between:
            between(Path(first["snapshot_path"]))
        second = self.download(target, self.rev2, layout, *extra)
        self.assertHolds(second, self.v2)
        return {"xorb_bytes": self.xorb_bytes(), "summary": second["summary"]}

    def terms(self, revision: str) -> dict[str, list[dict]]:
        """Each Xet file's reconstruction terms at `revision`, as the CAS answers them."""
        listing = self.hub.api(f"/api/models/{REPO}/tree/{revision}?recursive=true").json()
        token = self.hub.api(f"/api/models/{REPO}/xet-read-token/{revision}").json()
        return {entry["path"]: http_request("GET", f"{token['casUrl']}/v1/reconstructions/{entry['xetHash']}",
                                            {"Authorization": f"Bearer {token['accessToken']}"}).json()["terms"]
                for entry in listing if entry.get("xetHash")}

    def stored_anew(self) -> tuple[int, int]:
        """(bytes of revision 2's changed Xet files that the writer did not find in revision 1's xorbs, all their
        bytes).
        The first is what no client can avoid fetching; the rest names chunk ranges of revision-1 xorbs
        (mostly inside a revision-1 term)."""
        old = {}
        for terms in self.terms(self.rev1).values():
            for term in terms:
                old.setdefault(term["hash"], []).append((term["range"]["start"], term["range"]["end"]))
        new = total = 0
        earlier = self.terms(self.rev1)
        for path, terms in self.terms(self.rev2).items():
            if terms == earlier.get(path):
                continue   # unchanged: complete on disk, not fetched at all
            for term in terms:
                start, end = term["range"]["start"], term["range"]["end"]
                total += term["unpacked_length"]
                if not any(a <= start and end <= b for a, b in old.get(term["hash"], [])):
                    new += term["unpacked_length"]
        return new, total

    def assertFetchedAboutWhatChanged(self, run: dict, layout: str) -> None:
        fetched, copied = run["xorb_bytes"], run["summary"]["bytes_copied_locally"]
        anew, xet_bytes = self.stored_anew()
        report = {"layout": layout, "model_bytes": self.model_bytes, "changed_bytes": self.changed,
                  "changed_files_bytes": xet_bytes, "stored_anew_by_the_writer": anew, "xorb_bytes_fetched": fetched,
                  "bytes_copied_locally": copied}
        print(f"\n[update {layout}] {json.dumps(report)}", flush=True)
        # What hfget controls: it fetches what the writer stored anew and copies every other chunk (a xorb
        # range's chunk headers and a partly used fetch are the slack). That the writer's new bytes are about
        # the changed ones (the f x size + 5 %) is a matter of chunk and tensor sizes: with these
        # small shards and 128 KiB spans, each span costs a neighbouring chunk or two; bench/ measures a
        # model-sized update.
        self.assertLessEqual(fetched, anew * 1.02 + 64 * KIB, report)
        self.assertGreaterEqual(copied + fetched, xet_bytes, report)
        self.assertLess(anew, self.model_bytes / 2, f"the writer deduplicated little: {report}")

    def test_progress_counts_the_copied_bytes_apart(self):
        target = self.hub.new_dir("local")
        self.download(target, self.rev1, "local")
        result = self.hub.run_hfget(["download", REPO, "--revision", self.rev2, "--local-dir", str(target), "--json",
                                     "--progress", "json"])
        self.assertEqual(result.code, 0, result.stderr[-3000:])
        copied = json.loads(result.stdout)["summary"]["bytes_copied_locally"]
        events = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
        done = [e for e in events if e.get("event") == "done"]
        self.assertEqual(len(done), 1, result.stderr[-3000:])
        self.assertGreater(copied, 0)
        self.assertEqual(done[0]["bytes_copied_this_run"], copied)
        self.assertGreaterEqual(done[0]["bytes_this_run"], copied)

    def test_an_update_in_a_local_dir_fetches_about_what_changed(self):
        self.assertFetchedAboutWhatChanged(self.update("local"), "local")

    def test_an_update_in_the_cache_fetches_about_what_changed(self):
        self.assertFetchedAboutWhatChanged(self.update("cache"), "cache")

    def test_a_dry_run_says_what_would_be_copied_and_what_fetched_and_writes_nothing(self):
        target = self.hub.new_dir("local")
        self.download(target, self.rev1, "local")
        before = sorted(files_under(target))
        plan = self.download(target, self.rev2, "local", "--dry-run")
        self.assertEqual(sorted(files_under(target)), before, "a dry run writes nothing")
        anew, changed_files = self.stored_anew()
        copies = {f["path"]: f.get("bytes_to_copy", 0) for f in plan["files"]}
        # What the real update will copy: every byte of the changed files the writer did not store anew.
        self.assertEqual(sum(copies.values()), changed_files - anew, copies)
        text = self.hub.run_hfget(["download", REPO, "--revision", self.rev2, "--local-dir", str(target),
                                   "--dry-run"])
        self.assertEqual(text.code, 0, text.stderr[-3000:])
        self.assertIn("would be copied from files already here", text.stdout)
        self.assertIn("COPIED", text.stdout)

    def test_with_no_chunk_reuse_or_force_download_everything_is_fetched(self):
        for flag in ("--no-chunk-reuse", "--force-download"):
            run = self.update("cache", flag)
            self.assertEqual(run["summary"]["bytes_copied_locally"], 0, flag)
            self.assertGreater(run["xorb_bytes"], 0.9 * self.model_bytes, flag)

    def test_an_old_copy_edited_since_is_not_trusted_and_the_new_file_is_still_right(self):
        # In the cache a blob is the old content, whatever its mtime: one byte flipped in place, with the
        # file's identity kept as far as a plain write keeps it, is what the whole-file SHA-256 is there for.
        def flip_a_byte_in_every_old_shard(snapshot: Path) -> None:
            for shard in sorted(snapshot.glob("*.safetensors")):
                blob = shard.resolve()
                with open(blob, "r+b") as stream:
                    stream.seek(SHARD_SIZE // 3)
                    byte = stream.read(1)
                    stream.seek(SHARD_SIZE // 3)
                    stream.write(bytes([byte[0] ^ 0xFF]))

        run = self.update("cache", between=flip_a_byte_in_every_old_shard)
        self.assertGreater(run["xorb_bytes"], 0)

    def test_kill_9_in_the_middle_of_an_update_then_the_same_command_ends_byte_identical(self):
        # A second emulator on the same store, its bodies throttled so that the update can be caught midway.
        slow = self.start_hub({}, xet_store=self.hub.xet_store_dir, body_rate=256 * KIB)
        target = self.hub.new_dir("local")
        self.assertHolds(self.download(target, self.rev1, "local"), self.v1)
        args = ["download", REPO, "--revision", self.rev2, "--local-dir", str(target)]
        running = slow.start_hfget(args)
        self.addCleanup(running.ensure_stopped)

        def partial_bytes() -> int:   # bytes on disk: a partial file may be allocated ahead
            sizes = [(target / name).stat() for name in files_under(target) if name.endswith(".hfget-partial")]
            return sum(min(stat.st_size, stat.st_blocks * 512) for stat in sizes)

        wait_until(lambda: running.process.poll() is not None or partial_bytes() >= 512 * KIB, timeout=60,
                   what="part of the update on disk")
        self.assertIsNone(running.process.poll(), "the update finished before it could be killed")
        running.kill()
        self.assertEqual(running.wait(timeout=30).code, -signal.SIGKILL)
        resumed = self.hub.run_hfget([*args, "--json"])
        self.assertEqual(resumed.code, 0, resumed.stderr[-3000:])
        self.assertHolds(json.loads(resumed.stdout), self.v2)

    def test_a_file_that_repeats_an_earlier_one_of_the_same_download_copies_it(self):
        # As a consolidated file beside its shards: the writer stores the shared chunks once, and the second
        # file's terms name the first one's. One file at a time, the first is published before the second
        # is planned.
        # (This writer dedups a file against what the CAS already holds, not against another file of the same
        # upload: b.bin comes in a second commit.)
        earlier, folder = self.workdir / "repeats-1", self.workdir / "repeats-2"
        earlier.mkdir(exist_ok=True)
        folder.mkdir(exist_ok=True)
        draw = random.Random(5)
        first = draw.randbytes(3 * MIB)
        (earlier / "a.bin").write_bytes(first)
        self.hub.xet_upload(earlier, "org/repeats")
        (folder / "a.bin").write_bytes(first)
        (folder / "b.bin").write_bytes(first + draw.randbytes(256 * KIB))
        self.hub.xet_upload(folder, "org/repeats")
        target = self.hub.new_dir("local")
        self.hub.reset_logs()
        result = self.hub.run_hfget(["download", "org/repeats", "--local-dir", str(target), "--max-workers", "1",
                                     "--json"])
        self.assertEqual(result.code, 0, result.stderr[-3000:])
        for name in ("a.bin", "b.bin"):
            self.assertEqual((target / name).read_bytes(), (folder / name).read_bytes(), name)
        copied = json.loads(result.stdout)["summary"]["bytes_copied_locally"]
        self.assertGreaterEqual(copied, 3 * MIB - 128 * KIB)
        self.assertLessEqual(self.xorb_bytes(), 3 * MIB + 512 * KIB)

    def test_xorbs_that_keep_failing_turn_xet_off_even_while_chunks_are_copied(self):
        # Copies need the CAS's plans, not its xorbs: a file that copied some chunks and then failed on every
        # xorb still counts towards giving Xet up, or each further file would spend its retries finding out.
        target = self.hub.new_dir("local")
        self.assertHolds(self.download(target, self.rev1, "local"), self.v1)
        self.hub.set_faults([{"target": "xorb", "path": "xorbs/*", "kind": "status", "status": 503, "times": -1}])
        result = self.hub.run_hfget(["download", REPO, "--revision", self.rev2, "--local-dir", str(target), "--json",
                                     "--progress", "json", "--max-workers", "1", "--retries", "1"])
        self.assertEqual(result.code, 0, result.stderr[-3000:])
        self.assertHolds(json.loads(result.stdout), self.v2)
        events = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
        reasons = [e.get("reason", "") for e in events if e.get("event") == "file_path" and e.get("via") == "bridge"]
        self.assertTrue(any("the CAS failed for the files before it" in r for r in reasons), reasons)

    def test_a_target_without_hfgets_records_fetches_everything(self):
        def remove_the_records(snapshot: Path) -> None:
            shutil.rmtree(snapshot.parent.parent / "hfget" / "xet-layouts")

        run = self.update("cache", between=remove_the_records)
        self.assertEqual(run["summary"]["bytes_copied_locally"], 0)
        self.assertGreater(run["xorb_bytes"], 0.9 * self.model_bytes)


if __name__ == "__main__":
    unittest.main()
