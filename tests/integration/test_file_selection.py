"""Choosing files: FILES arguments, --include/--exclude with huggingface_hub's fnmatch rules ('*' crosses '/',
a trailing '/' means the whole folder), and the tree cache staying unfiltered."""

from __future__ import annotations

import fnmatch
import unittest

from harness import KIB, source_files
from support import HfgetTestCase

REPO = "test-org/tiny-model"


class FileSelectionTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=3, shard_size=64 * KIB)
        cls.all_files = sorted(source_files(cls.source))
        cls.hub = cls.start_hub({REPO: cls.source})
        cls.commit = cls.hub.commit(REPO)

    def download(self, *selection: str):
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", REPO, *selection, "--cache-dir", cache])
        return result, cache

    def expect(self, include=(), exclude=()) -> list[str]:
        return [p for p in self.all_files
                if (not include or any(fnmatch.fnmatchcase(p, i) for i in include))
                and not any(fnmatch.fnmatchcase(p, e) for e in exclude)]

    def check(self, selection: list[str], expected: list[str]) -> None:
        result, cache = self.download(*selection)
        self.assertSucceeded(result)
        # assertCacheSnapshot also checks that trees/<commit>.json lists every file, not only the selected.
        self.assertCacheSnapshot(cache, REPO, self.commit, self.source, selected=expected)

    def test_include_star_crosses_folders(self):
        expected = self.expect(include=["*.md"])
        self.assertIn("docs/notes.md", expected)
        self.check(["--include", "*.md"], expected)

    def test_exclude_removes_matches(self):
        self.check(["--exclude", "*.safetensors"], self.expect(exclude=["*.safetensors"]))

    def test_include_and_exclude_combine(self):
        self.check(["--include", "*.json", "--include", "*.md", "--exclude", "tokenizer*"],
                   self.expect(include=["*.json", "*.md"], exclude=["tokenizer*"]))

    def test_trailing_slash_selects_a_folder(self):
        self.check(["--include", "extra/"], ["extra/empty.txt", "extra/nested/data.bin"])

    def test_question_mark_and_brackets(self):
        self.check(["--include", "model-0000[13]-of-00003.safetensors", "--include", "config.jso?"],
                   ["config.json", "model-00001-of-00003.safetensors", "model-00003-of-00003.safetensors"])

    def test_literal_files(self):
        self.check(["config.json", "docs/notes.md", "extra/nested/data.bin"],
                   ["config.json", "docs/notes.md", "extra/nested/data.bin"])

    def test_a_selection_matching_nothing_exits_6_unless_allowed(self):
        result, cache = self.download("--include", "*.gguf")
        self.assertExit(result, 6)
        allowed, _ = self.download("--include", "*.gguf", "--allow-empty")
        self.assertSucceeded(allowed)
        self.assertEqual(len(allowed.stdout.splitlines()), 1)

    def test_empty_file_is_downloaded(self):
        self.check(["extra/empty.txt"], ["extra/empty.txt"])

    def test_unknown_literal_file_exits_6(self):
        result, _ = self.download("config.json", "no-such-file.bin")
        self.assertExit(result, 6)
        self.assertIn("no-such-file.bin", result.stderr)


if __name__ == "__main__":
    unittest.main()
