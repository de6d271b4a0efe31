"""--max-speed and HFGET_MAX_SPEED: a 64 MiB model fetched over 16 connections takes about size / rate (the
limit holds across all connections together), still verifies, and a malformed rate is a usage error (exit 2)
that names the flag or the variable. The bounds are generous: the 5 % target is the benchmark's; here the
run's start and end (listing, the checks) add to the transfer's time on a shared machine, so the upper bound
adds what an unlimited run of the same download takes there (seconds under ASan with another test alongside)."""

from __future__ import annotations

import unittest

from harness import MIB
from support import HfgetTestCase

REPO = "test-org/limited-model"


class MaxSpeedTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = cls.make_model("model", shards=4, shard_size=16 * MIB)
        cls.total = sum(path.stat().st_size for path in cls.source.rglob("*") if path.is_file())
        cls.hub = cls.start_hub({REPO: cls.source})
        cls.commit = cls.hub.commit(REPO)

    def download(self, extra: list[str], env: dict | None = None):
        target = self.hub.new_dir("target")
        result = self.hub.run_hfget(["download", REPO, "--local-dir", target, *extra], env=env, timeout=60)
        return result, target

    def unlimited_seconds(self) -> float:
        """How long the same download takes here with no limit: the start, the listing and the checks, which a
        limited run spends on top of its transfer. Measured once per class, the slowest of two."""
        cls = type(self)
        if getattr(cls, "_unlimited", None) is None:
            runs = [self.download([]) for _ in range(2)]
            for result, _ in runs:
                self.assertSucceeded(result)
            cls._unlimited = max(result.elapsed for result, _ in runs)
        return cls._unlimited

    def assertTookAboutSizeOverRate(self, result, rate: float) -> None:
        self.assertSucceeded(result)
        expected = self.total / rate
        self.assertGreaterEqual(result.elapsed, 0.85 * expected, f"faster than the limit allows:\n{result.stderr}")
        bound = 1.25 * expected + max(1.0, 1.5 * self.unlimited_seconds())
        self.assertLessEqual(result.elapsed, bound, f"far slower than the limit:\n{result.stderr}")

    def test_the_flag_holds_the_whole_download_to_the_rate(self):
        result, target = self.download(["--max-speed", "20M"])
        self.assertTookAboutSizeOverRate(result, 20 * MIB)
        self.assertLocalDir(target, self.commit, self.source)

    def test_the_environment_variable_sets_the_rate_and_the_flag_wins(self):
        result, target = self.download([], env={"HFGET_MAX_SPEED": "32m"})
        self.assertTookAboutSizeOverRate(result, 32 * MIB)
        self.assertLocalDir(target, self.commit, self.source)
        result, _ = self.download(["--max-speed", "40M"], env={"HFGET_MAX_SPEED": "1k"})
        self.assertTookAboutSizeOverRate(result, 40 * MIB)

    def test_a_decimal_rate_is_accepted(self):
        result, _ = self.download(["--max-speed", "0.05G"])
        self.assertTookAboutSizeOverRate(result, 0.05 * 1024 * MIB)

    def test_a_malformed_rate_is_a_usage_error_naming_the_flag_or_the_variable(self):
        result, target = self.download(["--max-speed", "fast"])
        self.assertExit(result, 2)
        self.assertIn("--max-speed", result.stderr)
        result, _ = self.download([], env={"HFGET_MAX_SPEED": "20 parsecs"})
        self.assertExit(result, 2)
        self.assertIn("HFGET_MAX_SPEED", result.stderr)

    def test_a_rate_too_low_for_the_speed_limit_is_a_usage_error(self):
        result, _ = self.download(["--max-speed", "1k"])
        self.assertExit(result, 2)
        self.assertIn("--max-speed", result.stderr)


if __name__ == "__main__":
    unittest.main()
