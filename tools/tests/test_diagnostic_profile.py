"""A diagnostic profile (scenario.py PROFILE_KEYS, docs/DESIGN.md §6.5) is an
experiment of ours about the full runs, shorter or traced: its report gives the
profile's text and sets nothing against the paper, whose figures were measured
over the full run."""
import pytest

from vegaskit.testbed import report
from vegaskit.testbed.scenario import Scenario, ScenarioError

TEXT = """
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
[profiles.onset]
duration = 5
diagnostic = "The first five seconds, traced."
[paper]
table = "Table 9"
columns = ["", "S1"]
rows = [["Reno", 1.0]]
[[paper.figures]]
id = "Table 9: S1 (bit/s)"
run = "reno"
metric = "throughput:S1"
value = 1000000
[report]
notes = "The full runs' reading."
"""


def _summary(profile):
    return {"run": "reno", "rep": 0, "profile": profile, "scenario": "t", "duration_s": 20,
            "impossible_windows": [], "bottleneck": {"rate_bps": 5e6, "rtt_ms": 4,
                                                     "buffer_pkts": 50},
            "jain": 1.0, "jain_lifetime": 1.0, "utilisation": 0.9, "queue_mean_pkts": 1.0,
            "bottleneck_loss_rate": 0.0, "deepest_queue_link": "bottleneck",
            "links": {"bottleneck": {"queue_mean_pkts": 1.0, "queue_p95_pkts": 2,
                                     "queue_delay_p95_ms": 2.4}},
            "flows": [{"flow": 1, "label": "S1", "cc": "reno", "start_s": 0.0, "avg_bps": 1e6,
                       "second_half_bps": 1e6, "retransmits": 0, "completion_s": None,
                       "rtt_p95_ms": 12.0, "rtt_min_ms": 12.0, "cwnd_max_bytes": 5e4,
                       "window_ceiling_bytes": 1e6}]}


def test_a_diagnostic_profile_reports_its_text_and_not_the_papers_verdicts():
    s = Scenario.parse(TEXT)
    assert s.run("reno", "onset").duration == 5
    full = report.render(s, "full", [_summary("full")], "make results")
    onset = report.render(s, "onset", [_summary("onset")], "make results")
    assert "## Against the paper" in full and "The full runs' reading." in full
    assert "Table 9" in full
    assert "## What this profile is for" in onset and "The first five seconds, traced." in onset
    for absent in ("## Against the paper", "Table 9", "The full runs' reading."):
        assert absent not in onset


@pytest.mark.parametrize("value", ['""', '"  "', "3", "[]"])
def test_a_diagnostic_must_be_text(value):
    with pytest.raises(ScenarioError, match="profile onset.diagnostic must be a non-empty string"):
        Scenario.parse(TEXT.replace('"The first five seconds, traced."', value))
