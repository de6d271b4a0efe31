"""Shared pieces of the integration tests: a TestCase base that owns its Hub, and layout checks.

The layout checks encode HUB-PROTOCOL.md §4 (cache) and §5 (local dir); the expected hashes come
from the emulator's oracle (hashlib over the source files), never from hfget.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path

from harness import Hub, HfgetResult, RepoFile, make_model, source_files

CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by huggingface_hub.\n"
                "# For information about cache directory tags, see:\n"
                "#\thttps://bford.info/cachedir/\n")
PARTIAL_SUFFIXES = (".hfget-partial", ".hfget-journal", ".incomplete")


def repo_folder_name(repo_id: str, repo_type: str = "model") -> str:
    return "--".join([f"{repo_type}s", *repo_id.split("/")])


def files_under(root: Path) -> list[str]:
    """Every file or symlink below root, relative, sorted ([] if root does not exist)."""
    root = Path(root)
    if not root.exists():
        return []
    found = []
    for directory, _, names in os.walk(root):
        for name in names:
            found.append((Path(directory) / name).relative_to(root).as_posix())
    return sorted(found)


class HfgetTestCase(unittest.TestCase):
    """Base class: a per-class temp dir, models made in it and Hubs stopped at class teardown."""

    maxDiff = None
    workdir: Path

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.workdir = Path(tempfile.mkdtemp(prefix=f"hfget-{cls.__name__}-"))
        if os.environ.get("HFGET_KEEP_TEST_DIRS") != "1":
            cls.addClassCleanup(shutil.rmtree, cls.workdir, True)

    @classmethod
    def make_model(cls, name: str = "model", **options) -> Path:
        directory = cls.workdir / name
        make_model(directory, **options)
        return directory

    @classmethod
    def start_hub(cls, repos: dict, **options) -> Hub:
        hub = Hub(repos, **options)
        hub.start()
        cls.addClassCleanup(hub.stop)
        return hub

    # -- assertions -------------------------------------------------------------------------------

    def assertExit(self, result: HfgetResult, code: int) -> None:
        self.assertEqual(result.code, code, f"expected exit {code}\n{result.describe()}")

    def assertSucceeded(self, result: HfgetResult) -> None:
        self.assertExit(result, 0)

    def assertStdoutIsPath(self, result: HfgetResult, expected: Path) -> None:
        lines = result.stdout.splitlines()
        self.assertEqual(len(lines), 1, f"stdout must be exactly one line (the path):\n{result.stdout!r}")
        self.assertEqual(os.path.realpath(lines[0]), os.path.realpath(expected))

    def assertNoPartials(self, root: Path) -> None:
        leftovers = [p for p in files_under(root) if p.endswith(PARTIAL_SUFFIXES)]
        self.assertEqual(leftovers, [], f"partial files left under {root}")

    def assertCacheSnapshot(self, cache_dir: Path, repo_id: str, commit: str, source_dir: Path,
                            selected: list[str] | None = None, repo_type: str = "model",
                            revision: str | None = "main") -> Path:
        """Check a cache download against HUB-PROTOCOL §4; returns the snapshot dir."""
        sources = source_files(source_dir)
        selected = sorted(sources) if selected is None else sorted(selected)
        repo_dir = Path(cache_dir) / repo_folder_name(repo_id, repo_type)
        snapshot = repo_dir / "snapshots" / commit

        self.assertEqual(files_under(snapshot), selected, "snapshot must hold exactly the selected files")
        for path in selected:
            source: RepoFile = sources[path]
            pointer = snapshot / path
            self.assertTrue(pointer.is_symlink(), f"{path} must be a symlink into blobs/")
            target = os.readlink(pointer)
            self.assertFalse(os.path.isabs(target), f"{path}: symlink target must be relative, got {target}")
            blob = repo_dir / "blobs" / source.etag
            self.assertEqual(target, os.path.relpath(blob, pointer.parent), f"{path}: wrong symlink target")
            self.assertTrue(blob.is_file() and not blob.is_symlink(), f"blob {blob.name} of {path} missing")
            self.assertEqual(blob.stat().st_size, source.size, f"{path}: wrong size")
            self.assertEqual(_sha256(blob), source.sha256, f"{path}: content differs from the source")
        self.assertEqual(sorted(files_under(repo_dir / "blobs")), sorted({sources[p].etag for p in selected}),
                         "blobs/ must hold exactly one blob per selected content (no partials, no extras)")

        if revision is not None and revision != commit:
            ref = repo_dir / "refs" / revision
            self.assertTrue(ref.is_file(), f"refs/{revision} missing")
            self.assertEqual(ref.read_bytes(), commit.encode(), "refs/<rev> must be the commit, no newline")
        tag = Path(cache_dir) / "CACHEDIR.TAG"
        self.assertTrue(tag.is_file(), "CACHEDIR.TAG missing at the cache root")
        self.assertEqual(tag.read_text(), CACHEDIR_TAG)
        self.assertTreeCache(repo_dir / "trees" / f"{commit}.json", sources)
        self.assertNoPartials(cache_dir)
        return snapshot

    def assertTreeCache(self, tree_file: Path, sources: dict[str, RepoFile]) -> None:
        """trees/<commit>.json: format 1, every file of the commit (unfiltered), sorted (HUB-PROTOCOL §4)."""
        self.assertTrue(tree_file.is_file(), f"{tree_file} missing")
        tree = json.loads(tree_file.read_text())
        self.assertEqual(tree.get("format_version"), 1)
        files = tree["files"]
        self.assertEqual(list(files), sorted(sources), "trees json must list all files of the commit, sorted")
        for path, source in sources.items():
            expected = {"size": source.size, "blob_id": source.git_oid}
            if source.lfs:
                expected.update(lfs_sha256=source.sha256, lfs_size=source.size)
            self.assertEqual(files[path], expected, f"trees json entry of {path}")

    def assertLocalDir(self, local_dir: Path, commit: str, source_dir: Path, selected: list[str] | None = None) -> None:
        """Check a local-dir download against HUB-PROTOCOL §5."""
        sources = source_files(source_dir)
        selected = sorted(sources) if selected is None else sorted(selected)
        local_dir = Path(local_dir)
        user_files = [p for p in files_under(local_dir) if not p.startswith(".cache/")]
        self.assertEqual(user_files, selected, "local dir must hold exactly the selected files")
        meta_root = local_dir / ".cache" / "huggingface"
        for path in selected:
            target = local_dir / path
            self.assertTrue(target.is_file() and not target.is_symlink(), f"{path} must be a real file")
            self.assertEqual(_sha256(target), sources[path].sha256, f"{path}: content differs from the source")
            metadata = (meta_root / "download" / f"{path}.metadata").read_text()
            lines = metadata.split("\n")
            self.assertEqual(len(lines), 4, f"{path}.metadata must be 3 \\n-terminated lines: {metadata!r}")
            self.assertEqual(lines[3], "")
            self.assertEqual(lines[0], commit, f"{path}.metadata line 1 = commit")
            self.assertEqual(lines[1], sources[path].etag, f"{path}.metadata line 2 = etag")
            # Python trusts metadata only if the file is not newer than it (HUB-PROTOCOL §5).
            self.assertGreaterEqual(float(lines[2]), target.stat().st_mtime - 1, f"{path}.metadata timestamp")
        self.assertEqual((meta_root / ".gitignore").read_text(), "*")
        self.assertEqual((meta_root / "CACHEDIR.TAG").read_text(), CACHEDIR_TAG)
        # hfget may keep its own state under .cache/huggingface/hfget/ (a namespace Python never uses).
        allowed = [p for p in files_under(meta_root)
                   if p in (".gitignore", "CACHEDIR.TAG") or p.startswith(("trees/", "hfget/"))
                   or (p.startswith("download/") and p.endswith((".metadata", ".lock")))]
        self.assertEqual(files_under(meta_root), allowed, "unexpected files under .cache/huggingface")
        self.assertNoPartials(local_dir)


def _sha256(path: Path) -> str:
    from harness import sha256_of
    return sha256_of(path)
