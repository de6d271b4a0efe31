"""`hfget verify` (docs/verify.md) on models hfget downloaded from the emulator, then damaged on disk.

Every damage is applied to a fresh, successful download, in a --local-dir and in the HF cache, and checked
in both outputs: the text report and the --json document must fail with exit 8, mark the failing check(s)
`fail` (and no other), and name the bad file with its cause. The expected hashes and sizes come from the
source files (the oracle), never from hfget. Also: a clean download passes with the right summary, --fast,
--include/--exclude, --allow-missing, offline (emulator stopped), --online, how a cache target is found,
and `hfget download` failing with exit 8 when the checks at its end fail.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import tempfile
import unittest
from dataclasses import dataclass, field
from pathlib import Path

from harness import FIXTURES, KIB, Hub, HfgetResult, run_hfget, sha256_of, source_files
from support import HfgetTestCase, repo_folder_name

REPO = "test-org/verify-model"
NO_TOKENIZER_REPO = "test-org/no-tokenizer"
NO_CONFIG_REPO = "test-org/no-config"
LOST_SHARD_REPO = "test-org/lost-shard"
REAL_REPO = "test-org/tiny-llama"
SHARD_SIZE = 256 * KIB
SHARDS = [f"model-{i:05d}-of-00004.safetensors" for i in range(1, 5)]
INDEX = "model.safetensors.index.json"
STRAY = "model-00005-of-00005.safetensors"
GHOST_TENSOR = "model.layers.99.ghost.weight"
CHECK_NAMES = ["completeness", "sizes", "hashes", "shard_set", "safetensors_headers", "config", "tokenizer"]
EXIT_VERIFICATION_FAILED = 8

_CHECK_LINE = re.compile(r"^  (PASS|FAIL|SKIP)  (\S+) +(.*)$")
_BAD_LINE = re.compile(r"^  BAD   (.+?): (.*) \[([a-z_]+(?:, [a-z_]+)*)\]$")


# --------------------------------------------------------------------------------------- formatting

def _scaled(size: int, base: float, units: tuple[str, ...]) -> str:
    """hfget's byte formatting (docs/cli.md: both units), written again from its description."""
    if size < base:
        return f"{size} B"
    value, unit = float(size), 0
    while round(value * 10) / 10 >= base and unit + 1 < len(units):
        value /= base
        unit += 1
    return f"{value:.1f} {units[unit]}"


def format_bytes_both(size: int) -> str:
    """'1.1 MB (1.1 MiB)': decimal, then binary."""
    if size < 1000:
        return f"{size} B"
    return (f"{_scaled(size, 1000.0, ('B', 'kB', 'MB', 'GB', 'TB', 'PB'))} "
            f"({_scaled(size, 1024.0, ('B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'))})")


# ------------------------------------------------------------------------------------------ reports

@dataclass
class Report:
    """One `hfget verify` run, text or JSON, reduced to what both outputs must agree on."""
    kind: str                                        # "text" or "json"
    result: HfgetResult
    checks: dict[str, tuple[str, str]] = field(default_factory=dict)   # name → (status, detail), in order
    problems: set[tuple[str, str, str]] = field(default_factory=set)   # (path, check, cause)
    ok: bool | None = None
    summary_line: str = ""                           # text: the last line
    document: dict | None = None                     # json: the whole document

    def describe(self) -> str:
        return f"hfget verify ({self.kind}): {self.result.describe()}"


def parse_text_report(result: HfgetResult) -> Report:
    report = Report("text", result)
    lines = result.stdout.splitlines()
    if not lines:
        return report
    report.summary_line = lines[-1]
    report.ok = lines[-1].startswith("OK: ")
    for line in lines[1:-1]:
        if match := _CHECK_LINE.match(line):
            report.checks[match.group(2)] = (match.group(1).lower(), match.group(3))
        elif match := _BAD_LINE.match(line):
            for check in match.group(3).split(", "):
                report.problems.add((match.group(1), check, match.group(2)))
        else:
            raise AssertionError(f"unexpected line in the text report: {line!r}\n{result.describe()}")
    return report


def parse_json_report(result: HfgetResult) -> Report:
    report = Report("json", result)
    try:
        document = json.loads(result.stdout)
    except ValueError:
        raise AssertionError(f"--json output is not one JSON document\n{result.describe()}") from None
    report.document = document
    report.ok = document["ok"]
    for check in document["checks"]:
        report.checks[check["name"]] = (check["status"], check["detail"])
    for problem in document["problems"]:
        report.problems.add((problem["path"], problem["check"], problem["cause"]))
    return report


@dataclass
class Target:
    """A finished download: what `hfget verify` is given, and where its files are."""
    layout: str            # "local" or "cache"
    args: list[str]        # the verify target (+ --cache-dir)
    root: Path             # the local dir, or the snapshot dir in the cache
    home: Path
    cache: Path | None = None


def flip_byte(path: Path, offset_from_end: int = 1000) -> None:
    """Invert one byte (follows a cache symlink into its blob, as any writer would)."""
    with open(path, "r+b") as stream:
        stream.seek(os.path.getsize(path) - offset_from_end)
        byte = stream.read(1)
        stream.seek(-1, os.SEEK_CUR)
        stream.write(bytes([byte[0] ^ 0xFF]))


def swap(a: Path, b: Path) -> None:
    temporary = a.with_name(a.name + ".swap")
    os.rename(a, temporary)
    os.rename(b, a)
    os.rename(temporary, b)


# -------------------------------------------------------------------------------------------- tests

class VerifyTestBase(HfgetTestCase):
    hub: Hub

    # -- downloads ----------------------------------------------------------------------------------

    def download(self, layout: str, repo: str = REPO, extra: list[str] | tuple = (), hub: Hub | None = None,
                 parent: Path | None = None) -> Target:
        """A successful download into a fresh local dir or cache; fails the test otherwise."""
        hub = hub or self.hub
        parent = parent or hub.new_dir(layout)
        parent.mkdir(parents=True, exist_ok=True)
        home = Path(tempfile.mkdtemp(prefix="home-", dir=parent))
        if layout == "local":
            local_dir = parent / "model"
            result = hub.run_hfget(["download", repo, "--local-dir", local_dir, *extra], home=home)
            self.assertSucceeded(result)
            return Target(layout, [str(local_dir)], local_dir, home)
        cache = parent / "cache"
        result = hub.run_hfget(["download", repo, "--cache-dir", cache, *extra], home=home)
        self.assertSucceeded(result)
        return Target(layout, [repo, "--cache-dir", str(cache)], Path(result.stdout.strip()), home, cache)

    # -- running verify -----------------------------------------------------------------------------

    def run_verify(self, args: list, home: Path, env: dict | None = None, hub: Hub | None = None) -> HfgetResult:
        hub = hub or self.hub
        return hub.run_hfget(["verify", *map(str, args)], home=home, env=env)

    def verify_both(self, target: Target, *extra, env: dict | None = None, hub: Hub | None = None,
                    endpoint: str | None = None) -> tuple[Report, Report]:
        """Run verify as text and as --json; both must say the same thing."""
        args = [*target.args, *map(str, extra)]
        if endpoint is not None:   # the emulator is gone: run without a Hub object
            text_run = run_hfget(["verify", *args], endpoint=endpoint, home=target.home, env=env)
            json_run = run_hfget(["verify", *args, "--json"], endpoint=endpoint, home=target.home, env=env)
        else:
            text_run = self.run_verify(args, target.home, env, hub)
            json_run = self.run_verify([*args, "--json"], target.home, env, hub)
        text, document = parse_text_report(text_run), parse_json_report(json_run)
        for report in (text, document):
            self.assertEqual(list(report.checks), CHECK_NAMES, f"every check, in order\n{report.describe()}")
            # A failing report may name its repair on stderr; nothing else goes there.
            other = [line for line in report.result.stderr.splitlines() if not line.startswith("hfget: to repair: ")]
            self.assertEqual(other, [], f"a report, not an error\n{report.describe()}")
            self.assertEqual(report.ok, report.result.code == 0, f"ok/OK must agree with the exit code\n"
                                                               f"{report.describe()}")
        self.assertEqual(text.checks, document.checks, "text and --json must report the same checks")
        self.assertEqual(text.problems, document.problems, "text and --json must report the same problems")
        self.assertEqual(text.result.code, document.result.code, "text and --json must exit alike")
        return text, document

    def assertVerifyPasses(self, target: Target, *extra, **options) -> tuple[Report, Report]:
        text, document = self.verify_both(target, *extra, **options)
        for report in (text, document):
            self.assertEqual(report.result.code, 0, report.describe())
            self.assertTrue(report.ok, report.describe())
            self.assertEqual(report.problems, set(), report.describe())
            self.assertEqual([n for n, (status, _) in report.checks.items() if status == "fail"], [],
                             report.describe())
        self.assertTrue(text.summary_line.startswith("OK: "), text.describe())
        return text, document

    def assertVerifyFails(self, target: Target, failing: set[str], problems: list[tuple[str, str, str]],
                          *extra, **options) -> tuple[Report, Report]:
        """Exit 8; exactly `failing` checks fail; each (path, check, cause-part) is reported, in both outputs."""
        text, document = self.verify_both(target, *extra, **options)
        for report in (text, document):
            self.assertEqual(report.result.code, EXIT_VERIFICATION_FAILED, report.describe())
            self.assertFalse(report.ok, report.describe())
            failed = {name for name, (status, _) in report.checks.items() if status == "fail"}
            self.assertEqual(failed, set(failing), f"failing checks\n{report.describe()}")
            for path, check, cause in problems:
                self.assertTrue(any(p == path and c == check and cause in k for p, c, k in report.problems),
                                f"expected problem {path} [{check}]: …{cause}…\n{report.describe()}")
            named = {p for p, _, _ in report.problems}
            self.assertTrue(named, f"a failure must name a file\n{report.describe()}")
        self.assertTrue(text.summary_line.startswith("FAILED: "), text.describe())
        return text, document


class VerifyTest(VerifyTestBase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=4, shard_size=SHARD_SIZE)
        cls.dev_source = cls.make_model("model-dev", shards=4, shard_size=SHARD_SIZE, seed=1)
        cls.no_tokenizer = cls.make_model("no-tokenizer", shards=4, shard_size=SHARD_SIZE, seed=2)
        for name in ("tokenizer.json", "tokenizer_config.json"):
            (cls.no_tokenizer / name).unlink()
        cls.no_config = cls.make_model("no-config", shards=4, shard_size=SHARD_SIZE, seed=3)
        (cls.no_config / "config.json").unlink()
        # The index names model-00004-of-00004.safetensors, but the repo does not have it.
        cls.lost_shard = cls.make_model("lost-shard", shards=4, shard_size=SHARD_SIZE, seed=4)
        (cls.lost_shard / SHARDS[3]).unlink()
        cls.real = cls.workdir / "tiny-llama"
        shutil.copytree(FIXTURES / "real-writers" / "tiny-llama-sharded", cls.real)
        cls.hub = cls.start_hub({REPO: cls.source, f"{REPO}@dev": cls.dev_source,
                                 NO_TOKENIZER_REPO: cls.no_tokenizer, NO_CONFIG_REPO: cls.no_config,
                                 LOST_SHARD_REPO: cls.lost_shard, REAL_REPO: cls.real})
        cls.commit = cls.hub.commit(REPO)
        cls.dev_commit = cls.hub.commit(REPO, "dev")
        cls.files = source_files(cls.source)
        cls.total_bytes = sum(f.size for f in cls.files.values())

    # -- a clean download ---------------------------------------------------------------------------

    def assertCleanSummary(self, text: Report, document: Report, root: Path, repo: str) -> None:
        summary = document.document["summary"]
        total = self.total_bytes
        self.assertEqual(summary["files_expected"], len(self.files))
        self.assertEqual(summary["files_present"], len(self.files))
        self.assertEqual(summary["files_excluded"], 0)
        self.assertEqual((summary["shards_expected"], summary["shards_present"]), (4, 4))
        self.assertEqual(summary["bytes_expected"], total)
        self.assertEqual(summary["bytes_hashed"], total, "every byte is hashed without --fast")
        self.assertEqual((summary["bytes_present"], summary["has_listing"], summary["hashed"]), (total, True, True))
        self.assertAlmostEqual(summary["gb_expected"], round(total / 1e9, 2), delta=0.006)
        self.assertAlmostEqual(summary["gib_expected"], round(total / 2**30, 2), delta=0.006)
        self.assertGreater(summary["elapsed_seconds"], 0)
        self.assertEqual(document.document["commit"], self.commit)
        self.assertEqual(document.document["repo"], repo)
        self.assertEqual(os.path.realpath(document.document["root"]), os.path.realpath(root))
        self.assertEqual({n: s for n, (s, _) in document.checks.items()}, {n: "pass" for n in CHECK_NAMES})

        self.assertIn(self.commit, text.result.stdout.splitlines()[0])
        self.assertIn(f"{len(self.files)}/{len(self.files)} files present", text.checks["completeness"][1])
        self.assertIn(f"{total} bytes = {format_bytes_both(total)}", text.checks["sizes"][1])
        self.assertIn(f"{INDEX}: 4/4 shards", text.checks["shard_set"][1])
        self.assertIn("4 file(s), 16 tensors", text.checks["safetensors_headers"][1])
        self.assertIn("config.json", text.checks["config"][1])
        self.assertIn("tokenizer.json", text.checks["tokenizer"][1])
        self.assertTrue(text.summary_line.startswith(
            f"OK: {len(self.files)}/{len(self.files)} files, shards 4/4, {format_bytes_both(total)}, "
            f"{format_bytes_both(total)} hashed in "), text.summary_line)

    def test_clean_local_dir_download_passes(self):
        target = self.download("local")
        text, document = self.assertVerifyPasses(target)
        self.assertCleanSummary(text, document, target.root, "")

    def test_clean_cache_download_passes(self):
        target = self.download("cache")
        text, document = self.assertVerifyPasses(target)
        self.assertCleanSummary(text, document, target.root, REPO)
        self.assertIn(f"{REPO} @ commit {self.commit}", text.result.stdout.splitlines()[0])

    def test_reference_writer_model_passes(self):
        """A model saved by transformers itself (tests/fixtures/real-writers) passes every check."""
        for layout in ("local", "cache"):
            with self.subTest(layout=layout):
                target = self.download(layout, REAL_REPO)
                text, document = self.assertVerifyPasses(target)
                tensors = len(json.loads((self.real / INDEX).read_text())["weight_map"])
                summary = document.document["summary"]
                self.assertEqual((summary["shards_expected"], summary["shards_present"]), (4, 4))
                self.assertEqual(summary["files_expected"], len(source_files(self.real)))
                self.assertIn(f"4 file(s), {tensors} tensors", text.checks["safetensors_headers"][1])

    def test_reference_writer_model_with_a_flipped_byte_and_a_deleted_shard_fails(self):
        target = self.download("local", REAL_REPO)
        flip_byte(target.root / SHARDS[1])
        (target.root / SHARDS[2]).unlink()
        self.assertVerifyFails(target, {"completeness", "hashes", "shard_set"},
                               [(SHARDS[1], "hashes", "sha256 mismatch"), (SHARDS[2], "completeness", "missing"),
                                (SHARDS[2], "shard_set", "missing")])

    # -- damages, in a local dir and in the cache -------------------------------------------------------

    def check_flipped_byte(self, layout: str) -> None:
        target = self.download(layout)
        shard = target.root / SHARDS[1]
        flip_byte(shard)
        self.assertVerifyFails(target, {"hashes"}, [
            (SHARDS[1], "hashes",
             f"sha256 mismatch: expected {self.files[SHARDS[1]].sha256}, got {sha256_of(shard)}")])

    def check_truncated_shard(self, layout: str) -> None:
        target = self.download(layout)
        full = self.files[SHARDS[2]].size
        os.truncate(target.root / SHARDS[2], full // 2)
        self.assertVerifyFails(target, {"sizes", "safetensors_headers"}, [
            (SHARDS[2], "sizes", f"size {full // 2} != {full} bytes expected"),
            (SHARDS[2], "safetensors_headers", "is out of bounds")])

    def check_deleted_shard(self, layout: str) -> None:
        target = self.download(layout)
        (target.root / SHARDS[3]).unlink()
        text, document = self.assertVerifyFails(target, {"completeness", "shard_set"}, [
            (SHARDS[3], "completeness", "missing"), (SHARDS[3], "shard_set", "missing")])
        summary = document.document["summary"]
        self.assertEqual((summary["files_present"], summary["files_expected"]), (len(self.files) - 1, len(self.files)))
        self.assertEqual((summary["shards_present"], summary["shards_expected"]), (3, 4))
        self.assertIn(f"{INDEX}: 3/4 shards", text.checks["shard_set"][1])
        self.assertTrue(text.summary_line.startswith(f"FAILED: {len(self.files) - 1}/{len(self.files)} files, "
                                                     f"shards 3/4"), text.summary_line)

    def check_swapped_shards(self, layout: str) -> None:
        target = self.download(layout)
        first, second = SHARDS[0], SHARDS[1]
        swap(target.root / first, target.root / second)
        same_size = self.files[first].size == self.files[second].size
        failing = {"hashes" if same_size else "sizes", "safetensors_headers"}
        # Each shard's header now holds the other layer's tensors: mapped ones are absent, present ones unmapped.
        problems = [(first, "safetensors_headers", "tensor 'model.layers.0.mlp.up_proj.weight' is mapped to this"),
                    (first, "safetensors_headers", "tensor 'model.layers.1.mlp.up_proj.weight' is missing from"),
                    (second, "safetensors_headers", "tensor 'model.layers.1.mlp.up_proj.weight' is mapped to this"),
                    (second, "safetensors_headers", "tensor 'model.layers.0.mlp.up_proj.weight' is missing from")]
        if same_size:
            problems += [(first, "hashes", "sha256 mismatch"), (second, "hashes", "sha256 mismatch")]
        else:
            problems += [(first, "sizes", f"size {self.files[second].size} != {self.files[first].size}"),
                         (second, "sizes", f"size {self.files[first].size} != {self.files[second].size}")]
        if layout == "cache":
            # The snapshot links now name each other's blob (docs/verify.md: completeness in the cache).
            failing.add("completeness")
            problems += [(first, "completeness", self.files[second].etag),
                         (second, "completeness", self.files[first].etag)]
        self.assertVerifyFails(target, failing, problems)

    def check_stray_shard(self, layout: str) -> None:
        target = self.download(layout)
        shutil.copyfile(target.root / SHARDS[3], target.root / STRAY)
        self.assertVerifyFails(target, {"shard_set"}, [(STRAY, "shard_set", "stray shard")])

    def check_index_names_a_missing_tensor(self, layout: str) -> None:
        target = self.download(layout)
        index = json.loads((target.root / INDEX).read_text())
        index["weight_map"][GHOST_TENSOR] = SHARDS[1]
        (target.root / INDEX).write_text(json.dumps(index, indent=2, sort_keys=True) + "\n")
        # The edited index no longer matches the listing either (its size changed): that is reported too.
        self.assertVerifyFails(target, {"sizes", "safetensors_headers"}, [
            (SHARDS[1], "safetensors_headers", f"tensor '{GHOST_TENSOR}' is mapped to this shard by {INDEX}"),
            (INDEX, "sizes", f"!= {self.files[INDEX].size} bytes expected")])

    def check_missing_tokenizer(self, layout: str) -> None:
        target = self.download(layout)
        (target.root / "tokenizer.json").unlink()
        text, _ = self.assertVerifyFails(target, {"completeness", "tokenizer"}, [
            ("tokenizer.json", "completeness", "missing"), ("tokenizer.json", "tokenizer", "missing")])
        self.assertIn("  BAD   tokenizer.json: missing [completeness, tokenizer]", text.result.stdout.splitlines())

    def check_missing_config(self, layout: str) -> None:
        target = self.download(layout)
        (target.root / "config.json").unlink()
        self.assertVerifyFails(target, {"completeness", "config"}, [
            ("config.json", "completeness", "missing"), ("config.json", "config", "missing")])

    def test_flipped_byte_local_dir(self): self.check_flipped_byte("local")
    def test_flipped_byte_cache(self): self.check_flipped_byte("cache")
    def test_truncated_shard_local_dir(self): self.check_truncated_shard("local")
    def test_truncated_shard_cache(self): self.check_truncated_shard("cache")
    def test_deleted_shard_local_dir(self): self.check_deleted_shard("local")
    def test_deleted_shard_cache(self): self.check_deleted_shard("cache")
    def test_swapped_shards_local_dir(self): self.check_swapped_shards("local")
    def test_swapped_shards_cache(self): self.check_swapped_shards("cache")
    def test_stray_shard_local_dir(self): self.check_stray_shard("local")
    def test_stray_shard_cache(self): self.check_stray_shard("cache")
    def test_index_names_a_missing_tensor_local_dir(self): self.check_index_names_a_missing_tensor("local")
    def test_index_names_a_missing_tensor_cache(self): self.check_index_names_a_missing_tensor("cache")
    def test_missing_tokenizer_local_dir(self): self.check_missing_tokenizer("local")
    def test_missing_tokenizer_cache(self): self.check_missing_tokenizer("cache")
    def test_missing_config_local_dir(self): self.check_missing_config("local")
    def test_missing_config_cache(self): self.check_missing_config("cache")

    def test_deleted_blob_behind_a_snapshot_link_is_missing(self):
        target = self.download("cache")
        blob = target.cache / repo_folder_name(REPO) / "blobs" / self.files[SHARDS[0]].etag
        blob.unlink()   # the snapshot link now dangles
        self.assertVerifyFails(target, {"completeness", "shard_set"}, [
            (SHARDS[0], "completeness", "missing"), (SHARDS[0], "shard_set", "missing")])

    # -- --fast ---------------------------------------------------------------------------------------

    def test_fast_skips_hashes(self):
        target = self.download("local")
        flip_byte(target.root / SHARDS[0])
        text, document = self.assertVerifyPasses(target, "--fast")
        self.assertEqual(document.checks["hashes"][0], "skip")
        self.assertIn("--fast", document.checks["hashes"][1])
        self.assertEqual(document.document["summary"]["bytes_hashed"], 0)
        self.assertIn(", not hashed, checked in ", text.summary_line)
        for check in ("completeness", "sizes", "shard_set", "safetensors_headers", "config", "tokenizer"):
            self.assertEqual(document.checks[check][0], "pass", check)
        self.assertVerifyFails(target, {"hashes"}, [(SHARDS[0], "hashes", "sha256 mismatch")])

    def test_fast_still_sees_a_truncated_shard(self):
        target = self.download("cache")
        os.truncate(target.root / SHARDS[0], 1000)
        self.assertVerifyFails(target, {"sizes", "safetensors_headers"}, [(SHARDS[0], "sizes", "size 1000 != ")],
                               "--fast")

    # -- selections --------------------------------------------------------------------------------------

    def test_include_download_reports_the_tokenizer_as_excluded(self):
        target = self.download("local", extra=["--include", "model*", "--include", "config.json"])
        selected = [p for p in self.files if p.startswith("model") or p == "config.json"]
        text, document = self.assertVerifyPasses(target)
        self.assertEqual(document.checks["tokenizer"][0], "skip", document.describe())
        self.assertIn("excluded", document.checks["tokenizer"][1])
        summary = document.document["summary"]
        self.assertEqual(summary["files_expected"], len(selected))
        self.assertEqual(summary["files_present"], len(selected))
        self.assertEqual(summary["files_excluded"], len(self.files) - len(selected))
        self.assertEqual(summary["bytes_expected"], sum(self.files[p].size for p in selected))
        self.assertIn(f"({len(self.files) - len(selected)} excluded", document.checks["completeness"][1])
        for check in ("completeness", "sizes", "hashes", "shard_set", "safetensors_headers", "config"):
            self.assertEqual(document.checks[check][0], "pass", check)
        self.assertNotIn("missing", text.result.stdout)

    def test_excluded_config_and_shard_are_not_missing(self):
        target = self.download("cache", extra=["--exclude", "config.json", "--exclude", "*-00003-of-*"])
        _, document = self.assertVerifyPasses(target)
        self.assertEqual(document.checks["config"][0], "skip", document.describe())
        self.assertIn("excluded", document.checks["config"][1])
        self.assertEqual(document.checks["shard_set"][0], "pass", document.describe())
        self.assertIn("3/4 shards (1 excluded)", document.checks["shard_set"][1])
        self.assertEqual(document.document["summary"]["files_excluded"], 2)

    # -- --allow-missing -------------------------------------------------------------------------------

    def test_allow_missing_tokenizer_on_a_repo_without_one(self):
        home = self.hub.new_dir("home")
        local_dir = self.hub.new_dir("local") / "model"
        download = self.hub.run_hfget(["download", NO_TOKENIZER_REPO, "--local-dir", local_dir], home=home)
        self.assertSucceeded(download)   # after a download it is only a warning (docs/verify.md)
        self.assertIn("warning: tokenizer", download.stderr)
        target = Target("local", [str(local_dir)], local_dir, home)
        text, document = self.verify_both(target)
        for report in (text, document):
            self.assertEqual(report.result.code, EXIT_VERIFICATION_FAILED, report.describe())
            self.assertEqual(report.checks["tokenizer"][0], "fail", report.describe())
            self.assertIn("--allow-missing tokenizer", report.checks["tokenizer"][1])
            self.assertEqual({n for n, (s, _) in report.checks.items() if s == "fail"}, {"tokenizer"})
        _, document = self.assertVerifyPasses(target, "--allow-missing", "tokenizer")
        self.assertEqual(document.checks["tokenizer"][0], "skip")
        self.assertIn("--allow-missing tokenizer", document.checks["tokenizer"][1])
        # Allowing the other one does not help.
        text = parse_text_report(self.run_verify([local_dir, "--allow-missing", "config"], home))
        self.assertEqual(text.result.code, EXIT_VERIFICATION_FAILED, text.describe())

    def test_allow_missing_config_on_a_repo_without_one(self):
        target = self.download("cache", NO_CONFIG_REPO)
        text, _ = self.verify_both(target)
        self.assertEqual(text.result.code, EXIT_VERIFICATION_FAILED, text.describe())
        self.assertEqual({n for n, (s, _) in text.checks.items() if s == "fail"}, {"config"})
        self.assertIn("--allow-missing config", text.checks["config"][1])
        _, document = self.assertVerifyPasses(target, "--allow-missing", "config")
        self.assertEqual(document.checks["config"][0], "skip")

    # -- --online and cache targets -------------------------------------------------------------------------

    def test_online_reads_the_listing_from_the_hub(self):
        target = self.download("cache")
        (target.cache / repo_folder_name(REPO) / "trees" / f"{self.commit}.json").unlink()
        # Offline, without the recorded listing, only structure can be checked (docs/verify.md).
        offline_text, offline = self.assertVerifyPasses(target)
        for check in ("completeness", "sizes", "hashes"):
            self.assertEqual(offline.checks[check][0], "skip", check)
        # What is on disk is still counted, and the summary does not pretend 0 bytes were checked.
        summary = offline.document["summary"]
        self.assertEqual((summary["has_listing"], summary["hashed"]), (False, False))
        self.assertEqual(summary["bytes_present"], self.total_bytes)
        self.assertIn(f"{format_bytes_both(self.total_bytes)} on disk, not hashed, checked in ",
                      offline_text.summary_line)
        self.hub.reset_logs()
        _, online = self.assertVerifyPasses(target, "--online")
        self.assertEqual({n: s for n, (s, _) in online.checks.items()}, {n: "pass" for n in CHECK_NAMES})
        self.assertEqual(online.document["summary"]["bytes_hashed"], self.total_bytes)
        tree_requests = [r["path"] for r in self.hub.hub_requests() if "/tree/" in r["path"]]
        self.assertTrue(tree_requests, "--online must list the repo on the Hub")
        self.assertTrue(all(self.commit in path for path in tree_requests), tree_requests)
        self.assertEqual(self.hub.cdn_requests(), [], "verify never downloads file bodies")
        flip_byte(target.root / SHARDS[2])
        self.assertVerifyFails(target, {"hashes"}, [(SHARDS[2], "hashes", "sha256 mismatch")], "--online")

    def test_cache_target_from_hf_hub_cache_and_revisions(self):
        cache = self.hub.new_dir("cache")
        home = self.hub.new_dir("home")
        env = {"HF_HUB_CACHE": cache}
        for revision in ("main", "dev"):
            self.assertSucceeded(self.hub.run_hfget(["download", REPO, "--revision", revision], home=home, env=env))
        snapshots = cache / repo_folder_name(REPO) / "snapshots"
        target = Target("cache", [REPO], snapshots / self.commit, home)
        cases = [((), self.commit), (("--revision", "main"), self.commit), (("--revision", self.commit), self.commit),
                 (("--revision", "dev"), self.dev_commit), (("--revision", self.dev_commit), self.dev_commit)]
        for extra, commit in cases:
            with self.subTest(revision=extra):
                _, document = self.assertVerifyPasses(target, *extra, env=env)
                self.assertEqual(document.document["commit"], commit)
                self.assertEqual(os.path.realpath(document.document["root"]), os.path.realpath(snapshots / commit))
                self.assertEqual(document.document["repo"], REPO)
        # The dev snapshot is damaged, main is not: --revision picks which one is checked.
        (snapshots / self.dev_commit / "tokenizer.json").unlink()
        self.assertVerifyPasses(target, "--revision", "main", env=env)
        self.assertVerifyFails(target, {"completeness", "tokenizer"}, [("tokenizer.json", "tokenizer", "missing")],
                               "--revision", "dev", env=env)

    def test_cache_target_in_the_default_cache_under_hf_home(self):
        home = self.hub.new_dir("home")
        self.assertSucceeded(self.hub.run_hfget(["download", REPO], home=home))
        target = Target("cache", [REPO], Path(), home)
        _, document = self.assertVerifyPasses(target)
        self.assertEqual(os.path.realpath(document.document["root"]),
                         os.path.realpath(home / ".cache" / "huggingface" / "hub" / repo_folder_name(REPO)
                                          / "snapshots" / self.commit))

    def assertTargetNotFound(self, args: list, code: int, home: Path, env: dict | None = None) -> None:
        for extra in ((), ("--json",)):
            result = self.run_verify([*args, *extra], home, env)
            self.assertExit(result, code)
            self.assertEqual(result.stdout, "", result.describe())
            lines = result.stderr.splitlines()
            self.assertEqual(len(lines), 1, result.describe())
            self.assertTrue(lines[0].startswith("hfget: error: "), result.describe())

    def test_unknown_repo_and_revision_in_the_cache(self):
        target = self.download("cache")
        cache = target.cache
        self.assertTargetNotFound(["test-org/never-downloaded", "--cache-dir", cache], 3, target.home)
        self.assertTargetNotFound([REPO, "--cache-dir", cache, "--revision", "no-such-branch"], 5, target.home)
        self.assertTargetNotFound([REPO, "--cache-dir", cache, "--revision", "f" * 40], 5, target.home)
        self.assertTargetNotFound([REPO, "--cache-dir", cache, "--repo-type", "dataset"], 3, target.home)
        # The emulator's dev branch exists, but was never downloaded here.
        self.assertTargetNotFound([REPO, "--cache-dir", cache, "--revision", "dev"], 5, target.home)

    def test_bare_name_that_is_neither_a_directory_nor_cached(self):
        home = self.hub.new_dir("home")
        self.assertTargetNotFound(["no-such-model"], 3, home)

    # An explicit path ('/abs/path', './rel/path') is a local dir even when it does not exist.
    def test_nonexistent_directory_exits_3(self):
        home = self.hub.new_dir("home")
        missing = self.hub.new_dir("gone") / "does-not-exist"
        self.assertTargetNotFound([missing], 3, home)
        self.assertTargetNotFound(["./does-not-exist/model"], 3, home)

    # -- the checks at the end of `hfget download` ---------------------------------------------------------------

    def test_download_fails_with_exit_8_when_its_index_names_a_shard_the_repo_lacks(self):
        for layout in ("local", "cache"):
            with self.subTest(layout=layout):
                parent = self.hub.new_dir(layout)
                home = self.hub.new_dir("home")
                where = (["--local-dir", parent / "model"] if layout == "local" else ["--cache-dir", parent / "cache"])
                result = self.hub.run_hfget(["download", LOST_SHARD_REPO, *where], home=home)
                self.assertExit(result, EXIT_VERIFICATION_FAILED)
                self.assertEqual(result.stdout, "", "no path on stdout when the download failed")
                errors = [line for line in result.stderr.splitlines() if line.startswith("hfget: error: ")]
                self.assertEqual(len(errors), 1, result.describe())
                self.assertIn(SHARDS[3], errors[0])
                self.assertIn("missing", errors[0])
                # Every file the repo has was downloaded; verify then names the missing shard in shard_set.
                if layout == "local":
                    target = Target(layout, [str(parent / "model")], parent / "model", home)
                else:
                    target = Target(layout, [LOST_SHARD_REPO, "--cache-dir", str(parent / "cache")], Path(), home)
                self.assertVerifyFails(target, {"shard_set"}, [
                    (SHARDS[3], "shard_set", f"missing: named by {INDEX}")])


class OfflineVerifyTest(VerifyTestBase):
    """verify needs no network: the emulator and the CDN are stopped before it runs."""

    def test_verify_with_the_emulator_stopped(self):
        source = self.make_model("model", shards=4, shard_size=SHARD_SIZE)
        files = source_files(source)
        parent = Path(tempfile.mkdtemp(prefix="offline-", dir=self.workdir))
        with Hub({REPO: source}) as hub:
            local = self.download("local", hub=hub, parent=parent / "a")
            cache = self.download("cache", hub=hub, parent=parent / "b")
            endpoint = hub.url
        port = int(endpoint.rsplit(":", 1)[1])
        with self.assertRaises(OSError, msg="the emulator must be gone"):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        for target in (local, cache):
            with self.subTest(layout=target.layout):
                _, document = self.assertVerifyPasses(target, endpoint=endpoint)
                self.assertEqual(document.document["summary"]["bytes_hashed"], sum(f.size for f in files.values()))
                flip_byte(target.root / SHARDS[0])
                (target.root / "config.json").unlink()
                self.assertVerifyFails(target, {"hashes", "completeness", "config"},
                                       [(SHARDS[0], "hashes", "sha256 mismatch"), ("config.json", "config", "missing")],
                                       endpoint=endpoint)


if __name__ == "__main__":
    unittest.main()
