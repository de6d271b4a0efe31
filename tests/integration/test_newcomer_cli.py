"""What a new user types, and what a script expects back (issue 15's newcomer walk): one pattern per
--include/--exclude, an empty selection is an error, the path of a single requested file, `--json`, the
spellings `hf download` scripts carry, help and typo hints, an unwritable target and a closed stdout."""

from __future__ import annotations

import json
import subprocess
import unittest
from pathlib import Path

from harness import KIB, clean_hfget_env, hfget_binary, source_files
from support import HfgetTestCase, repo_folder_name

REPO = "test-org/tiny-model"
DATASET = "test-org/tiny-dataset"


class NewcomerCliTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=2, shard_size=32 * KIB)
        cls.dev = cls.make_model("dev", shards=1, shard_size=16 * KIB, seed=7)
        cls.hub = cls.start_hub({REPO: cls.source, f"{REPO}@dev": cls.dev, f"dataset:{DATASET}": cls.source})
        cls.commit = cls.hub.commit(REPO)

    def download(self, *args: str, env: dict | None = None):
        cache = self.hub.new_dir("cache")
        return self.hub.run_hfget(["download", *args, "--cache-dir", cache], env=env), cache

    def snapshot(self, cache: Path, repo: str = REPO, commit: str | None = None, repo_type: str = "model") -> Path:
        return cache / repo_folder_name(repo, repo_type) / "snapshots" / (commit or self.commit)

    # -- item 1: one pattern per flag occurrence ------------------------------------------------------

    def test_exclude_takes_one_pattern_and_what_follows_is_a_file(self):
        result, cache = self.download(REPO, "--exclude", "*.safetensors", "config.json", "--dry-run")
        self.assertSucceeded(result)
        self.assertIn("1 file(s) selected", result.stdout)
        self.assertIn("config.json", result.stdout)

    def test_include_before_the_repo_id(self):
        result, cache = self.download("--include", "*.json", REPO)
        self.assertSucceeded(result)
        present = sorted(p.relative_to(self.snapshot(cache)).as_posix()
                         for p in self.snapshot(cache).rglob("*") if not p.is_dir())
        self.assertEqual(present, sorted(p for p in source_files(self.source) if p.endswith(".json")))

    def test_repeated_include_and_exclude_accumulate(self):
        result, _ = self.download(REPO, "--include", "*.json", "--include", "*.md", "--exclude", "tokenizer*",
                                  "--dry-run")
        self.assertSucceeded(result)
        expected = [p for p in source_files(self.source)
                    if (p.endswith(".json") or p.endswith(".md")) and not p.startswith("tokenizer")]
        self.assertIn(f"{len(expected)} file(s) selected", result.stdout)

    # -- item 6: an empty selection fails -----------------------------------------------------------

    def test_empty_selection_exits_6_naming_the_pattern_and_writes_nothing(self):
        result, cache = self.download(REPO, "--include", "*.gguf")
        self.assertExit(result, 6)
        self.assertIn("--include '*.gguf'", result.stderr)
        self.assertIn("--allow-empty", result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertFalse((cache / repo_folder_name(REPO)).exists())

    def test_allow_empty_accepts_an_empty_selection(self):
        result, _ = self.download(REPO, "--include", "*.gguf", "--allow-empty")
        self.assertSucceeded(result)

    # -- item 12: one named file → its path -----------------------------------------------------------

    def test_one_named_file_prints_the_files_path(self):
        result, cache = self.download(REPO, "config.json")
        self.assertSucceeded(result)
        path = Path(result.stdout.strip())
        self.assertEqual(path, self.snapshot(cache) / "config.json")
        self.assertEqual(path.read_bytes(), (self.source / "config.json").read_bytes())

    def test_a_pattern_or_two_files_print_the_snapshot(self):
        for selection in (["*.json"], ["config.json", "README.md"]):
            result, cache = self.download(REPO, *selection)
            self.assertSucceeded(result)
            self.assertEqual(Path(result.stdout.strip()), self.snapshot(cache))

    # -- item 16: --json ------------------------------------------------------------------------------

    def test_json_prints_one_document_with_path_commit_files_bytes_and_checks(self):
        result, cache = self.download(REPO, "--json", "-q")
        self.assertSucceeded(result)
        document = json.loads(result.stdout)
        self.assertTrue(document["ok"])
        self.assertEqual(document["exit_code"], 0)
        self.assertEqual(Path(document["path"]), self.snapshot(cache))
        self.assertEqual(document["commit"], self.commit)
        self.assertEqual(document["repo_id"], REPO)
        self.assertEqual(sorted(f["path"] for f in document["files"]), sorted(source_files(self.source)))
        self.assertTrue(all(f["action"] == "downloaded" for f in document["files"]))
        total = sum((self.source / p).stat().st_size for p in source_files(self.source))
        self.assertEqual(document["summary"]["bytes_selected"], total)
        self.assertEqual(document["summary"]["bytes_reused"], 0)
        self.assertTrue(document["checks"]["ok"])

        again = self.hub.run_hfget(["download", REPO, "--json", "-q", "--cache-dir", cache])
        self.assertSucceeded(again)
        second = json.loads(again.stdout)
        self.assertTrue(all(f["action"] == "present" for f in second["files"]))
        self.assertEqual(second["summary"]["bytes_reused"], total)
        self.assertEqual(second["summary"]["bytes_downloaded"], 0)

    def test_json_failure_is_a_document_too(self):
        result, _ = self.download("test-org/no-such-model", "--json")
        self.assertExit(result, 3)
        document = json.loads(result.stdout)
        self.assertFalse(document["ok"])
        self.assertEqual(document["exit_code"], 3)
        self.assertEqual(document["error"]["kind"], "repo_not_found")

    def test_json_failure_document_for_an_unwritable_log_file(self):
        blocker = self.hub.new_dir("blocked") / "a-file"
        blocker.write_text("not a directory\n")
        result, _ = self.download(REPO, "config.json", "--json", "--log-file", blocker / "hfget.log")
        self.assertExit(result, 11)
        document = json.loads(result.stdout)
        self.assertEqual((document["ok"], document["exit_code"]), (False, 11))
        self.assertIn(str(blocker), document["error"]["message"])
        self.assertNotIn("internal error", result.stderr)

    # -- item 14: `hf download` spellings ---------------------------------------------------------------

    def test_datasets_prefix_names_the_repo_type(self):
        result, cache = self.download(f"datasets/{DATASET}")
        self.assertSucceeded(result)
        commit = self.hub.commit(DATASET, repo_type="dataset")
        self.assertEqual(Path(result.stdout.strip()), self.snapshot(cache, DATASET, commit, "dataset"))

    def test_hf_url_with_a_revision(self):
        result, cache = self.download(f"hf://{REPO}@dev", "config.json")
        self.assertSucceeded(result)
        dev_commit = self.hub.commit(REPO, "dev")
        self.assertEqual(Path(result.stdout.strip()), self.snapshot(cache, commit=dev_commit) / "config.json")
        conflicting, _ = self.download(f"hf://{REPO}@dev", "--revision", "main")
        self.assertExit(conflicting, 2)
        self.assertIn("--revision", conflicting.stderr)

    def test_hub_page_url_is_read_as_the_repo_and_the_host_is_not_trusted_with_the_token(self):
        result, cache = self.download(f"https://huggingface.co/{REPO}", "config.json")
        self.assertSucceeded(result)
        self.assertIn("huggingface.co", result.stderr)  # the warning: hfget uses the configured endpoint
        self.assertEqual(Path(result.stdout.strip()), self.snapshot(cache) / "config.json")
        inside, _ = self.download(f"https://huggingface.co/{REPO}/resolve/main/config.json")
        self.assertExit(inside, 2)
        self.assertIn("path inside the repo", inside.stderr)

    def test_deprecated_hf_download_flags_are_accepted_with_a_warning(self):
        result, _ = self.download(REPO, "config.json", "--resume-download", "--local-dir-use-symlinks", "False")
        self.assertSucceeded(result)
        self.assertIn("--resume-download is deprecated", result.stderr)
        self.assertIn("--local-dir-use-symlinks is deprecated", result.stderr)

    # -- item 13: help, typos, prefixes -----------------------------------------------------------------

    def run_bare(self, *args: str) -> subprocess.CompletedProcess:
        home = self.hub.new_dir("home")
        return subprocess.run([hfget_binary(), *args], env=clean_hfget_env(home, self.hub.url), capture_output=True,
                              text=True, timeout=30, stdin=subprocess.DEVNULL)

    def test_no_arguments_prints_the_help(self):
        result = self.run_bare()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("download", result.stdout)
        self.assertIn("verify", result.stdout)

    def test_a_typo_of_a_command_gets_a_suggestion(self):
        result = self.run_bare("downlod", REPO)
        self.assertEqual(result.returncode, 2)
        self.assertIn("hfget: error: unknown command 'downlod'; did you mean 'download'?", result.stderr)

    def test_a_typo_of_a_flag_gets_a_suggestion_and_the_prefix(self):
        result = self.run_bare("download", REPO, "--inclde", "*.json")
        self.assertEqual(result.returncode, 2)
        self.assertIn("did you mean --include?", result.stderr)
        self.assertIn("hfget: error:", result.stderr)

    def test_every_parse_error_has_the_prefix(self):
        for args in (["download"], ["download", REPO, "--connections", "many"], ["verify"]):
            result = self.run_bare(*args)
            self.assertEqual(result.returncode, 2, args)
            self.assertTrue(result.stderr.startswith("hfget: error: "), (args, result.stderr))

    def test_capital_v_prints_the_version(self):
        for flag in ("-V", "--version"):
            result = self.run_bare(flag)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertRegex(result.stdout, r"\d+\.\d+")

    # -- item 10: unwritable target, closed stdout ------------------------------------------------------

    def test_unwritable_target_exits_11_naming_the_path_and_the_cause(self):
        blocker = self.hub.new_dir("blocked") / "a-file"
        blocker.write_text("not a directory\n")
        for flag in ("--local-dir", "--cache-dir"):
            result = self.hub.run_hfget(["download", REPO, "config.json", flag, blocker / "target"])
            self.assertExit(result, 11)
            self.assertIn(f"hfget: error: {blocker}", result.stderr)
            self.assertIn("Not a directory", result.stderr)
            self.assertNotIn("internal error", result.stderr)

    def test_a_closed_stdout_ends_ls_quietly(self):
        home = self.hub.new_dir("home")
        process = subprocess.Popen([hfget_binary(), "ls", REPO], env=clean_hfget_env(home, self.hub.url),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        process.stdout.close()  # the reader is gone before hfget writes its first line, as `| head -0`
        try:
            _, stderr = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise
        self.assertEqual(process.returncode, 141, stderr)
        self.assertEqual(stderr, b"")


if __name__ == "__main__":
    unittest.main()
