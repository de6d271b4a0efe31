"""Tokens: private and gated repos need the right one; it is taken from --token, HF_TOKEN, HF_TOKEN_PATH or
$HF_HOME/token; it is sent to the Hub only, never to the CDN host, and never printed."""

from __future__ import annotations

import signal
import unittest

from harness import KIB
from support import HfgetTestCase, files_under

PRIVATE = "secret-org/private-model"
GATED = "gated-org/gated-model"
PUBLIC = "test-org/public-model"
TOKEN = "hf_TestPrivateToken1234567890abcdef"
GATED_TOKEN = "hf_TestGatedAccess0987654321fedcba"
OTHER_TOKEN = "hf_TestValidButUnrelated5555555555"


class AuthTestBase(HfgetTestCase):
    cdn = "nginx"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=2, shard_size=64 * KIB)
        cls.hub = cls.start_hub({PRIVATE: cls.source, GATED: cls.source, PUBLIC: cls.source}, cdn=cls.cdn,
                                private={PRIVATE: TOKEN}, gated={GATED: GATED_TOKEN}, tokens=[OTHER_TOKEN])

    def assertTokenNeverLeaks(self, result, *tokens: str) -> None:
        for token in tokens:
            self.assertNotIn(token, result.stdout, "token printed on stdout")
            self.assertNotIn(token, result.stderr, "token printed on stderr")
            self.assertNotIn(token, self.hub.cdn_access_log_text(), "token reached the CDN")
        cdn = self.hub.cdn_requests()
        self.assertTrue(cdn, "LFS files must have been fetched from the CDN")
        self.assertEqual([r for r in cdn if r["authorization"]], [], "Authorization sent to the CDN host")


class TokenTest(AuthTestBase):
    def test_private_repo_with_token_flag_downloads_and_keeps_the_token_from_the_cdn(self):
        self.hub.reset_logs()
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", PRIVATE, "--token", TOKEN, "--cache-dir", cache, "-v"])
        self.assertSucceeded(result)
        self.assertCacheSnapshot(cache, PRIVATE, self.hub.commit(PRIVATE, token=TOKEN), self.source)
        self.assertTokenNeverLeaks(result, TOKEN)
        hub_requests = self.hub.hub_requests()
        self.assertTrue(all(r["has_authorization"] for r in hub_requests), "every Hub request carries the token")

    def test_token_from_hf_token_env(self):
        self.hub.reset_logs()
        result = self.hub.run_hfget(["download", PRIVATE, "--local-dir", self.hub.new_dir("local")],
                                    env={"HF_TOKEN": TOKEN})
        self.assertSucceeded(result)
        self.assertTokenNeverLeaks(result, TOKEN)

    def test_token_from_hf_token_path_file(self):
        home = self.hub.new_dir("home")
        token_file = home / "my-token"
        token_file.write_text(TOKEN + "\n")   # a trailing newline is stripped, as Python does
        result = self.hub.run_hfget(["download", PRIVATE, "--cache-dir", self.hub.new_dir("cache")], home=home,
                                    env={"HF_TOKEN_PATH": token_file})
        self.assertSucceeded(result)

    def test_token_from_hf_home_token_file(self):
        home = self.hub.new_dir("home")
        hf_home = home / ".cache" / "huggingface"
        hf_home.mkdir(parents=True)
        (hf_home / "token").write_text(TOKEN)
        result = self.hub.run_hfget(["download", PRIVATE, "--cache-dir", self.hub.new_dir("cache")], home=home)
        self.assertSucceeded(result)

    def test_token_flag_wins_over_hf_token(self):
        result = self.hub.run_hfget(["download", PRIVATE, "--token", TOKEN, "--cache-dir", self.hub.new_dir("c")],
                                    env={"HF_TOKEN": OTHER_TOKEN})
        self.assertSucceeded(result)

    def test_private_repo_without_token_is_not_found_or_denied(self):
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", PRIVATE, "--cache-dir", cache])
        self.assertIn(result.code, (3, 4), result.describe())
        self.assertEqual(files_under(cache), [])

    def test_private_repo_with_an_unrelated_valid_token_exits_3(self):
        result = self.hub.run_hfget(["download", PRIVATE, "--token", OTHER_TOKEN, "--cache-dir",
                                     self.hub.new_dir("cache")])
        self.assertExit(result, 3)
        self.assertTokenNeverLeaksInOutput(result, OTHER_TOKEN)

    def test_rejected_token_exits_4_and_is_not_printed(self):
        bad = "hf_ThisTokenIsNotKnownToTheHub000000"
        result = self.hub.run_hfget(["download", PUBLIC, "--token", bad, "--cache-dir", self.hub.new_dir("cache")])
        self.assertExit(result, 4)
        self.assertTokenNeverLeaksInOutput(result, bad)

    def test_gated_repo_without_token_exits_4(self):
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", GATED, "--cache-dir", cache])
        self.assertExit(result, 4)
        # Resumable *.hfget-partial files may stay; nothing may appear under a final name.
        finals = [p for p in files_under(cache) if "/snapshots/" in p
                  or ("/blobs/" in p and not p.endswith((".hfget-partial", ".hfget-journal")))]
        self.assertEqual(finals, [])

    def test_gated_repo_without_token_fails_once_before_any_file(self):
        # One line naming the page where the licence is accepted, not one FAILED line per file.
        self.hub.reset_logs()
        target = self.hub.new_dir("local")
        result = self.hub.run_hfget(["download", GATED, "--local-dir", target])
        self.assertExit(result, 4)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        self.assertEqual(len(lines), 1, result.describe())
        self.assertTrue(lines[0].startswith("hfget: error: "), result.describe())
        self.assertIn(f"accept its licence at {self.hub.url}/{GATED}", lines[0])
        self.assertIn("HF_TOKEN", lines[0])
        resolves = [r for r in self.hub.hub_requests() if "/resolve/" in r["path"]]
        self.assertEqual(len(resolves), 1, f"one access check and no file tried: {resolves}")
        self.assertEqual(resolves[0]["range"], "bytes=0-0")
        self.assertEqual(files_under(target), [], "nothing written")
        cache = self.hub.new_dir("cache")
        in_cache = self.hub.run_hfget(["download", GATED, "--cache-dir", cache])
        self.assertExit(in_cache, 4)
        self.assertEqual(files_under(cache), [], "no models--… folder for `cache ls` to warn about")

    def test_gated_repo_pinned_to_a_commit_fails_once_too(self):
        # Deploy scripts pin commits: the one-line error must not depend on a branch name.
        commit = self.hub.commit(GATED)
        target = self.hub.new_dir("local")
        result = self.hub.run_hfget(["download", GATED, "--revision", commit, "--local-dir", target])
        self.assertExit(result, 4)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        self.assertEqual(len(lines), 1, result.describe())
        self.assertIn(f"accept its licence at {self.hub.url}/{GATED}", lines[0])
        self.assertEqual(files_under(target), [], "nothing written")

    def test_gated_repo_with_a_token_without_access_exits_4(self):
        result = self.hub.run_hfget(["download", GATED, "--token", OTHER_TOKEN, "--cache-dir",
                                     self.hub.new_dir("cache")])
        self.assertExit(result, 4)
        self.assertTokenNeverLeaksInOutput(result, OTHER_TOKEN)

    def test_gated_repo_with_an_approved_token_downloads(self):
        self.hub.reset_logs()
        cache = self.hub.new_dir("cache")
        result = self.hub.run_hfget(["download", GATED, "--token", GATED_TOKEN, "--cache-dir", cache])
        self.assertSucceeded(result)
        self.assertCacheSnapshot(cache, GATED, self.hub.commit(GATED), self.source)
        self.assertTokenNeverLeaks(result, GATED_TOKEN)

    def assertTokenNeverLeaksInOutput(self, result, token: str) -> None:
        self.assertNotIn(token, result.stdout + result.stderr)


class TokenWithEmulatorCdnTest(AuthTestBase):
    """The same guarantee when the CDN is the emulator's (its log records whether Authorization came)."""
    cdn = "emulator"

    def test_token_not_sent_to_the_cdn_even_on_retries(self):
        self.hub.reset_logs()
        self.hub.set_faults([{"path": "*.safetensors", "kind": "drop", "after_bytes": 10000, "times": 2}])
        try:
            result = self.hub.run_hfget(["download", PRIVATE, "--token", TOKEN, "--cache-dir",
                                         self.hub.new_dir("cache"), "-v"])
        finally:
            self.hub.clear_faults()
        self.assertSucceeded(result)
        self.assertTokenNeverLeaks(result, TOKEN)
        self.assertGreater(len(self.hub.cdn_requests()), 2, "the dropped transfers were retried")


if __name__ == "__main__":
    unittest.main()
