"""The smallest repetition summary (summary.json's shape) that report.render
accepts for a one-flow reno run on a 5 Mbit/s, 4 ms bottleneck, and the scenario
it is a run of, written once for the report tests; a test names only the keys it
is about, and may append tables to the scenario."""
from __future__ import annotations

SCENARIO = """
name = "t"
duration = 20
[links]
bottleneck = { rate = "5M", rtt_ms = 4 }
[[flows]]
cc = "reno"
[runs]
reno = {}
[profiles.full]
reps = 6
"""


def minimal_summary(**over) -> dict:
    """One reno flow's repetition 0 of run "reno" in scenario "t"; keyword
    arguments replace or add top-level keys."""
    sm = {"run": "reno", "rep": 0, "scenario": "t", "duration_s": 20,
          "impossible_windows": [],
          "bottleneck": {"rate_bps": 5e6, "rtt_ms": 4, "buffer_pkts": 50},
          "jain": 1.0, "jain_lifetime": 1.0, "utilisation": 0.9, "queue_mean_pkts": 1.0,
          "bottleneck_loss_rate": 0.0, "deepest_queue_link": "bottleneck",
          "links": {"bottleneck": {"queue_mean_pkts": 1.0, "queue_p95_pkts": 2,
                                   "queue_delay_p95_ms": 2.4}},
          "flows": [{"flow": 1, "label": "S1", "cc": "reno", "start_s": 0.0, "avg_bps": 1e6,
                     "second_half_bps": 1e6, "retransmits": 0, "completion_s": None,
                     "rtt_p95_ms": 12.0, "rtt_min_ms": 12.0, "cwnd_max_bytes": 5e4,
                     "window_ceiling_bytes": 1e6}]}
    sm.update(over)
    return sm
