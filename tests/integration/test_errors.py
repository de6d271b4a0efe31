"""Failures map to the documented exit codes: 2 usage, 3 repo not found, 5 revision not found, 6 file not
found, 7 network failure; and a failed run leaves no final files behind."""

from __future__ import annotations

import socket
import subprocess
import sys
import unittest

from harness import KIB, unused_port, wait_until
from support import HfgetTestCase, files_under

REPO = "test-org/tiny-model"


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


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

    def test_nothing_listening_exits_7_at_once_naming_hf_endpoint(self):
        # A refused first contact is a wrong endpoint, not an outage: no minute of retries.
        port = unused_port("127.0.0.1")   # free a moment ago: connections are refused
        endpoint = f"http://127.0.0.1:{port}"
        result, cache = self.run_download(REPO, env={"HF_ENDPOINT": endpoint, "HFGET_RETRY_BASE_MS": "2000"},
                                          timeout=60)
        self.assertExit(result, 7)
        self.assertEqual(files_under(cache), [])
        self.assertLess(result.elapsed, 1.5, "the first backoff alone is 0-2 s: it must not have been waited")
        self.assertNotIn("retrying in", result.stderr)
        self.assertIn(f"HF_ENDPOINT={endpoint}", result.stderr)
        self.assertEqual(len(result.stderr.splitlines()), 1, result.describe())

    def test_an_unknown_host_exits_7_at_once_naming_the_flag(self):
        endpoint = "http://no-such-hub.invalid"   # RFC 6761: never resolves
        result, cache = self.run_download(REPO, "--endpoint", endpoint, env={"HFGET_RETRY_BASE_MS": "2000"},
                                          timeout=60)
        self.assertExit(result, 7)
        self.assertEqual(files_under(cache), [])
        self.assertNotIn("retrying in", result.stderr)
        self.assertIn(f"--endpoint {endpoint}", result.stderr)

    def test_a_web_server_that_is_not_a_hub_is_named_as_such(self):
        # python3 -m http.server answers every /api/ path with an HTML 404 page and none of the Hub's headers.
        site = self.hub.new_dir("site")
        port = unused_port("127.0.0.1")
        server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                                   "--directory", str(site)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(server.wait, 10)
        self.addCleanup(server.kill)
        wait_until(lambda: _accepts(port), 10, what="http.server to listen")
        endpoint = f"http://127.0.0.1:{port}"
        for command in (["download", REPO, "--cache-dir", self.hub.new_dir("cache")], ["ls", REPO]):
            with self.subTest(command=command[0]):
                result = self.hub.run_hfget(command, env={"HF_ENDPOINT": endpoint})
                self.assertExit(result, 7)
                self.assertIn("not the Hub's", result.stderr)
                self.assertIn(f"is {endpoint} a Hugging Face Hub?", result.stderr)
                self.assertIn(f"HF_ENDPOINT={endpoint}", result.stderr)
                self.assertNotIn("HF_TOKEN", result.stderr, "not a token problem")

    def test_ls_and_verify_online_take_retries(self):
        cache = self.hub.new_dir("cache")
        self.assertSucceeded(self.hub.run_hfget(["download", REPO, "--cache-dir", cache]))
        # A 503 on every API request: --retries 1 gives two attempts, announced as "attempt 2 of 2".
        self.hub.set_faults([{"path": "/api/*", "kind": "status", "status": 503, "times": -1, "target": "api"}])
        self.addCleanup(self.hub.clear_faults)
        for command in (["ls", REPO], ["verify", REPO, "--online", "--cache-dir", cache]):
            with self.subTest(command=command[0]):
                result = self.hub.run_hfget([*command, "--retries", "1"], timeout=60)
                self.assertExit(result, 7)
                self.assertIn("(attempt 2 of 2)", result.stderr)
                self.assertNotIn("(attempt 3", result.stderr)

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
