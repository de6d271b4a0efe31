"""The connection count adapts to the link: behind a per-connection cap (nginx limit_rate, as a CDN edge caps
each connection) default flags climb past the starting count and finish faster than a small fixed count;
--connections N fixes the count (one `connections` event, no change); --max-connections is never exceeded;
a CDN refusing connections with 429 cuts the count.

Each connection is capped at 2 MiB/s, so the rate is what the count makes it: 128 MiB take ~16 s over 4
connections and a few seconds once the controller has climbed (it adds a batch every 1.5 s while the rate
keeps rising).
"""

from __future__ import annotations

import json
import unittest

from harness import MIB
from support import HfgetTestCase

REPO = "test-org/capped-model"
RATE_PER_CONNECTION = "2m"


def connection_events(stderr: str) -> list[dict]:
    events = []
    for line in stderr.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("event") == "connections":
            events.append(event)
    return events


class ConnectionCountTest(HfgetTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.model = cls.make_model("capped", shards=4, shard_size=32 * MIB)
        cls.hub = cls.start_hub({REPO: cls.model}, limit_rate=RATE_PER_CONNECTION, nginx_workers=2)

    def download(self, *flags: str, timeout: float = 120.0):
        target = self.hub.new_dir("target")
        result = self.hub.run_hfget(["download", REPO, "--local-dir", str(target), "--progress", "json", *flags],
                                    timeout=timeout)
        self.assertSucceeded(result)
        return result, connection_events(result.stderr)

    def test_default_flags_climb_past_the_start_and_beat_a_small_fixed_count(self):
        adaptive, events = self.download()
        counts = [event["count"] for event in events]
        self.assertTrue(counts, f"no connections event\n{adaptive.describe()}")
        self.assertEqual(counts[0], 16, events)
        self.assertGreaterEqual(max(counts), 32, events)  # at least one doubling kept
        self.assertTrue(all(event["reason"] for event in events), events)
        fixed, _ = self.download("--connections", "4")
        self.assertLess(adaptive.elapsed * 1.5, fixed.elapsed,
                        f"adaptive {adaptive.elapsed:.1f}s, --connections 4 {fixed.elapsed:.1f}s; events {events}")

    def test_a_fixed_count_reports_one_event_and_never_changes(self):
        _, events = self.download("--connections", "6")
        self.assertEqual([(event["count"], event["reason"]) for event in events], [(6, "fixed by --connections")])

    def test_the_count_never_exceeds_the_ceiling(self):
        _, events = self.download("--max-connections", "12")
        counts = [event["count"] for event in events]
        self.assertTrue(counts)
        self.assertLessEqual(max(counts), 12, events)
        self.assertEqual(max(counts), 12, events)  # the cap binds: more would have paid

    def test_a_ceiling_outside_one_to_256_is_a_usage_error(self):
        for value in ("0", "257"):
            result = self.hub.run_hfget(["download", REPO, "--max-connections", value, "--dry-run"])
            self.assertExit(result, 2)
            self.assertIn("--max-connections must be between 1 and 256", result.stderr)



class PushBackTest(HfgetTestCase):
    """A CDN refusing parallel ranges with 429 (the emulator's CDN, where faults can be injected)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.model = cls.make_model("refusing", shards=2, shard_size=16 * MIB)
        cls.hub = cls.start_hub({REPO: cls.model}, cdn="emulator")

    def test_refused_connections_cut_the_count(self):
        self.hub.set_faults([{"path": "*.safetensors", "kind": "status", "status": 429, "retry_after": 1,
                              "times": 6}])
        self.addCleanup(self.hub.clear_faults)
        target = self.hub.new_dir("target")
        result = self.hub.run_hfget(["download", REPO, "--local-dir", str(target), "--progress", "json"],
                                    timeout=120)
        self.assertSucceeded(result)
        events = connection_events(result.stderr)
        cuts = [(before["count"], after["count"]) for before, after in zip(events, events[1:])
                if "push-back" in after["reason"]]
        self.assertTrue(cuts, f"no push-back event: {events}")
        self.assertTrue(all(after < before for before, after in cuts), events)

if __name__ == "__main__":
    unittest.main()
