"""Failures map to the documented exit codes: 2 usage, 3 repo not found, 5 revision not found, 6 file not
found, 7 network failure; and a failed run leaves no final files behind."""

from __future__ import annotations

import socket
import unittest

from harness import KIB, unused_port
from support import HfgetTestCase, files_under

REPO = "test-org/tiny-model"


class ErrorExitCodeTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=1, shard_size=16 * KIB)
        cls.hub = cls.start_hub({REPO: cls.source}, tokens=["hf_valid_user_token"])

    def run_download(self, *args: str, **options):
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", *args, "--cache-dir", cache], **options)
        return result, cache

    def test_unknown_repo_exits_3(self):
        result, cache = self.run_download("test-org/does-not-exist")
        self.assertExit(result, 3)
        self.assertIn("test-org/does-not-exist", result.stderr)
        self.assertEqual(files_under(cache), [])

    def test_unknown_repo_with_a_valid_token_exits_3(self):
        result, _ = self.run_download("test-org/does-not-exist", "--token", "hf_valid_user_token")
        self.assertExit(result, 3)

    def test_a_model_id_asked_for_as_a_dataset_exits_3(self):
        result, _ = self.run_download(REPO, "--repo-type", "dataset")
        self.assertExit(result, 3)

    def test_unknown_revision_exits_5(self):
        result, _ = self.run_download(REPO, "--revision", "no-such-branch")
        self.assertExit(result, 5)

    def test_unknown_file_exits_6(self):
        result, _ = self.run_download(REPO, "missing.safetensors")
        self.assertExit(result, 6)
        self.assertIn("missing.safetensors", result.stderr)

    def test_nothing_listening_exits_7(self):
        port = unused_port("127.0.0.1")   # free a moment ago: connections are refused
        result, cache = self.run_download(REPO, "--endpoint", f"http://127.0.0.1:{port}", "--retries", "2",
                                          timeout=60)
        self.assertExit(result, 7)
        self.assertEqual(files_under(cache), [])
        # Each retry is announced on stderr when it is decided: a wrong endpoint must not look like a hang.
        self.assertIn(f"127.0.0.1:{port}", result.stderr)
        self.assertIn("retrying in", result.stderr)
        self.assertIn("(attempt 2 of 3)", result.stderr)
        self.assertIn("(attempt 3 of 3)", result.stderr)

    def test_a_server_that_accepts_and_never_answers_exits_7(self):
        with socket.socket() as silent:
            silent.bind(("127.0.0.1", 0))
            silent.listen(8)
            port = silent.getsockname()[1]
            result, _ = self.run_download(REPO, "--endpoint", f"http://127.0.0.1:{port}", "--retries", "1",
                                          "--stall-timeout", "1", timeout=60)
        self.assertExit(result, 7)

    def test_invalid_repo_ids_exit_2(self):
        for repo_id in ("a/b/c", "../x", "org/..", "/abs", "org/", "", "org name/x"):
            with self.subTest(repo_id=repo_id):
                result, cache = self.run_download(repo_id)
                self.assertExit(result, 2)
                self.assertEqual(files_under(cache), [])

    def test_usage_errors_exit_2(self):
        cases = {
            "unknown flag": ["download", REPO, "--no-such-flag"],
            "missing repo id": ["download"],
            "unknown command": ["no-such-command"],
            "local dir and cache dir": ["download", REPO, "--local-dir", "x", "--cache-dir", "y"],
            "non-numeric workers": ["download", REPO, "--max-workers", "many"],
        }
        for name, args in cases.items():
            with self.subTest(name):
                result = self.hub.run_hfget(args, cwd=self.hub.new_dir("cwd"))
                self.assertExit(result, 2)
                self.assertEqual(result.stdout, "", "errors go to stderr")
                self.assertNotEqual(result.stderr.strip(), "", "a usage error says what is wrong")


if __name__ == "__main__":
    unittest.main()
