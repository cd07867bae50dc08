"""Repetitions with a window no controller grew are set aside (docs/DESIGN.md §10.2):
the path's ceiling (runner.window_ceiling), the check from flows.csv for runs made
before it (results.backfill), the figures without them, and what the report says."""
import json

import pytest

from vegaskit.analysis import figures, metrics
from vegaskit.cli.results import backfill
from vegaskit.testbed import report, runner
from vegaskit.testbed.scenario import Scenario

SCENARIO = """
name = "t"
duration = 20
[links]
access = { rate = "100M", rtt_ms = 4 }
bottleneck = { rate = "5M", rtt_ms = 4, buffer = 50 }
egress = { rate = "1M", rtt_ms = 4, buffer = 20 }
[[flows]]
cc = "reno"
[[flows]]
cc = "reno"
egress = { rate = "1M", rtt_ms = 10 }
[[schedule]]
at = 10
link = "bottleneck"
rate = "200M"
buffer = 80
[runs]
reno = {}
[profiles.full]
reps = 6
"""


def test_the_ceiling_is_four_times_what_the_path_holds():
    # 10 Mbit/s for 100 ms is 125,000 bytes in flight; 50 packets of 1,500 bytes queued
    assert metrics.window_ceiling_bytes(10e6, 0.1, 50) == 4 * (125_000 + 75_000)
    with pytest.raises(ValueError):
        metrics.window_ceiling_bytes(10e6, -0.1, 50)


def test_a_flows_ceiling_takes_its_own_links_at_their_largest():
    run = Scenario.parse(SCENARIO).run("reno", "full")
    s1, s2 = run.flows
    access_buf = s1.access.buffer_pkts          # the scenario format's default
    # the fastest link is the bottleneck after the schedule (200M); delays add up per flow
    assert runner.window_ceiling(run, s1) == metrics.window_ceiling_bytes(
        200e6, 0.012, access_buf + 80 + 20)
    assert runner.window_ceiling(run, s2) == metrics.window_ceiling_bytes(
        200e6, 0.018, access_buf + 80 + s2.egress.buffer_pkts)
    run.direct_edges = True                     # plain veths: the emulator is the path
    assert runner.window_ceiling(run, s1) == metrics.window_ceiling_bytes(200e6, 0.004, 80)


def test_a_window_above_the_ceiling_names_its_flow():
    flows = [{"label": "S1", "cwnd_max_bytes": 133_216, "window_ceiling_bytes": 1_500_000},
             {"label": "S2", "cwnd_max_bytes": 967_440_447_488, "window_ceiling_bytes": 1_500_000}]
    assert runner.impossible_windows(flows) == ["S2"]
    flows[1]["cwnd_max_bytes"] = 1_500_000      # at the ceiling is still a window
    assert runner.impossible_windows(flows) == []


def _sm(rep: int, s1: float, aside: bool = False, run: str = "vegas") -> dict:
    return {"run": run, "rep": rep, "scenario": "t",
            "flows": [{"label": "S1", "cc": "vk", "avg_bps": s1, "completion_s": None}],
            "impossible_windows": ["S1"] if aside else []}


RUNS = {"vegas": {}, "reno": {}}


def test_figures_leave_out_the_repetitions_set_aside():
    sms = [_sm(r, 100_000 + r, aside=r == 2) for r in range(7)]
    sms[2]["flows"][0]["avg_bps"] = 9e9                 # what the defect's burst did
    row = figures.evaluate({"figures": [{"id": "x", "run": "vegas", "metric": "throughput:S1",
                                         "value": 9e9}]}, sms, RUNS)[0]
    assert row["ours"]["n"] == 6 and row["ours"]["high"] == 100_006
    assert (row["set_aside"], row["verdict"]) == (1, "differs")
    sms[3]["impossible_windows"] = ["S1"]
    sms[4]["impossible_windows"] = ["S1"]
    row = figures.evaluate({"figures": [{"id": "x", "run": "vegas", "metric": "throughput:S1",
                                         "value": 1e5}]}, sms, RUNS)[0]
    assert (row["ours"]["n"], row["set_aside"], row["verdict"]) == (4, 3, "too few runs")


def test_a_claim_pairs_the_kept_repetitions_by_number():
    left = [_sm(r, 200_000, aside=r == 0) for r in range(6)]
    right = [_sm(r, 100_000, run="reno", aside=r == 5) for r in range(6)]
    right[0]["flows"][0]["avg_bps"] = 300_000   # rep 0 would fail, but its left is set aside
    claim = {"id": "c", "left": {"run": "vegas", "metric": "throughput:S1"}, "op": ">",
             "right": {"run": "reno", "metric": "throughput:S1"}}
    row = figures.evaluate({"claims": [claim]}, left + right, RUNS)[0]
    assert (row["holds"], row["of"], row["set_aside"]) == (4, 4, 2)
    assert row["verdict"] == "too few runs"


def test_a_run_whose_every_repetition_was_set_aside_is_measured_not_missing():
    sms = [_sm(r, 1e5, aside=True) for r in range(6)]
    row = figures.evaluate({"figures": [{"id": "x", "run": "vegas", "metric": "throughput:S1",
                                         "value": 1e5}]}, sms, RUNS)[0]
    assert (row["ours"]["n"], row["set_aside"], row["verdict"]) == (0, 6, "too few runs")


FLOWS_CSV = """flow,cc,t0_s,t1_s,bytes,bps,cwnd_bytes,rtt_us,retransmits
1,reno,0.0,0.5,100,800,14480,12000,0
1,reno,0.5,1.0,100,800,133216,30000,0
2,reno,0.0,0.5,100,800,14480,12000,0
2,reno,0.5,1.0,100,800,967440447488,600000,0
2,reno,1.0,1.5,100,800,,,
"""


def test_backfill_checks_runs_made_before_the_ceiling_existed(tmp_path):
    scenario = Scenario.parse(SCENARIO)
    sms = []
    for rep in range(6):
        d = tmp_path / "reno" / f"rep{rep}"
        d.mkdir(parents=True)
        (d / "flows.csv").write_text(FLOWS_CSV)
        sm = {"run": "reno", "rep": rep, "flows": [{"flow": 1, "label": "S1", "rtt_min_ms": 12.0},
                                                    {"flow": 2, "label": "S2", "rtt_min_ms": 12.0}]}
        (d / "summary.json").write_text(json.dumps(sm))
        sms.append(sm)
    out = backfill(tmp_path, sms, scenario, "full")
    assert [fl["cwnd_max_bytes"] for fl in out[0]["flows"]] == [133_216, 967_440_447_488]
    assert out[0]["impossible_windows"] == ["S2"]
    one = json.loads((tmp_path / "reno" / "rep3" / "summary.json").read_text())
    assert one["impossible_windows"] == ["S2"]
    assert one["flows"][1]["window_ceiling_bytes"] == runner.window_ceiling(
        scenario.run("reno", "full"), scenario.run("reno", "full").flows[1])
    assert not runner.fill_window_check(out[0], tmp_path / "reno" / "rep0",
                                        scenario.run("reno", "full"))   # checked once
    assert backfill(tmp_path, [{"run": "reno", "rep": 0, "flows": []}])[0] \
        .get("impossible_windows") is None                              # no scenario: no check


def test_the_report_lists_what_it_set_aside_and_measures_the_rest():
    scenario = Scenario.parse(SCENARIO)
    base = {"bottleneck": {"rate_bps": 5e6, "rtt_ms": 4, "buffer_pkts": 50}, "duration_s": 20,
            "jain": 1.0, "jain_lifetime": 1.0, "utilisation": 0.9, "queue_mean_pkts": 1.0,
            "bottleneck_loss_rate": 0.0, "links": {"bottleneck": {
                "queue_mean_pkts": 1.0, "queue_p95_pkts": 2, "queue_delay_p95_ms": 2.4}},
            "deepest_queue_link": "bottleneck", "scenario": "t", "run": "reno"}
    sms = []
    for rep in range(6):
        bad = rep == 4
        fl = {"flow": 1, "label": "S1", "cc": "reno", "start_s": 0.0, "avg_bps": 9e9 if bad else 1e6,
              "second_half_bps": 1e6, "retransmits": 0, "completion_s": None, "rtt_p95_ms": 12.0,
              "rtt_min_ms": 12.0, "cwnd_max_bytes": 967_440_447_488 if bad else 50_000,
              "window_ceiling_bytes": 1_500_000}
        sms.append({**base, "rep": rep, "flows": [fl], "impossible_windows": ["S1"] if bad else []})
    text = report.render(scenario, "full", sms, "make results")
    assert "## Repetitions set aside" in text
    assert "| reno | 4 | S1 | reno | 967,440,447,488 | 1,500,000 |" in text
    assert "9,000,000,000" not in text            # the set-aside burst is in no table


def test_a_run_the_scenario_no_longer_matches_stays_unchecked(tmp_path):
    scenario = Scenario.parse(SCENARIO)
    d = tmp_path / "reno" / "rep0"
    d.mkdir(parents=True)
    (d / "flows.csv").write_text(FLOWS_CSV)
    gone = {"run": "reno", "rep": 0, "flows": [{"flow": 7, "label": "S7"}]}   # flows changed
    other = {"run": "reno", "rep": 0, "flows": [{"flow": 1, "label": "S1"}]}
    assert backfill(tmp_path, [gone], scenario, "full")[0].get("impossible_windows") is None
    assert backfill(tmp_path, [other], scenario, "ci")[0].get("impossible_windows") is None


def test_a_set_aside_summary_from_before_repetitions_renders():
    scenario = Scenario.parse(SCENARIO)
    sm = {"run": "reno", "scenario": "t", "duration_s": 20, "impossible_windows": ["S1"],
          "bottleneck": {"rate_bps": 5e6, "rtt_ms": 4, "buffer_pkts": 50},
          "flows": [{"flow": 1, "label": "S1", "cc": "reno", "cwnd_max_bytes": 10**12,
                     "window_ceiling_bytes": 10**6}]}
    assert "| reno | 0 | S1 | reno | 1,000,000,000,000 | 1,000,000 |" in \
        report.render(scenario, "full", [sm], "make results")
