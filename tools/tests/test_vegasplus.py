"""make vegas-plus's pure parts: the generated scenarios and the figures taken
from a run's queue log (tools/vegaskit/vegasplus/)."""
from __future__ import annotations

import pytest

from vegaskit.testbed.scenario import Scenario, ScenarioError
from vegaskit.vegasplus import cases, measure


@pytest.mark.parametrize("case", cases.CASES)
@pytest.mark.parametrize("net", cases.NETS)
def test_every_generated_scenario_is_a_valid_one(case, net):
    s = Scenario.parse(cases.scenario_toml(cases.CASES[case], cases.NETS[net]))
    run = s.run("vegas_plus", "full", 0)
    ours = run.flows[0]
    assert ours.cc == "bpf_vegas_plus" and s.reps("full") == cases.REPS
    others = {"pair": 1, "cubic4": 4, "alone": 0}.get(case, 1)
    assert len(run.flows) == 1 + others
    assert run.direct_edges == net.startswith("100M")      # DESIGN §7.3
    assert all(f.sysctl == tuple(sorted(cases.NETS[net].sysctl)) for f in run.flows)
    for k, spec in cases.ABLATIONS.items():        # vegasctl instances of their own
        ab = s.run(k, "full", 0)
        assert ab.flows[0].cc == k and ab.controllers[k] == spec


def test_ablations_run_only_when_named():
    from vegaskit.cli.vegas_plus import pick_ccs
    assert pick_ccs(None) == list(cases.CCS) and not set(cases.ABLATIONS) & set(pick_ccs(None))
    assert pick_ccs(["vp_ss_capped", "cubic"]) == ["vp_ss_capped", "cubic"]
    with pytest.raises(ScenarioError, match="no controller 'nope'"):
        pick_ccs(["nope"])


def test_buffers_are_one_bdp_and_at_least_20_packets():
    assert {k: n.buffer for k, n in cases.NETS.items() if "frame" not in k} == \
        {"10M20": 20, "10M80": 67, "100M20": 167, "100M80": 667, "100M20tsq": 167}
    assert {n.buffer for k, n in cases.NETS.items() if "frame" in k} == {167}


def test_the_frame_network_sizes_a_100_mbit_flows_frames_at_the_floor():
    # tcp_tso_autosize: the pacing rate (bytes/s) >> 10, in segments, at least 2;
    # at 100 Mbit/s a window spans one BDP plus its queue, so cwnd/srtt is the link's rate
    knobs = dict(cases.NETS["100M20frame2"].sysctl)
    link_bytes_s = 100e6 / 8
    for knob in ("tcp_pacing_ca_ratio", "tcp_pacing_ss_ratio"):
        assert int(link_bytes_s * knobs[knob] / 100) >> 10 < 2 * 1448, knob


@pytest.mark.parametrize("segs", [3, 4, 6])
def test_the_frame_networks_size_congestion_avoidances_frames_as_named(segs):
    # as above: 1 ms of ratio x the link's rate, in whole segments (tcp_tso_autosize)
    knobs = dict(cases.NETS[f"100M20frame{segs}"].sysctl)
    assert (int(100e6 / 8 * knobs["tcp_pacing_ca_ratio"] / 100) >> 10) // 1448 == segs
    assert knobs["tcp_pacing_ss_ratio"] == 2 * knobs["tcp_pacing_ca_ratio"]   # doubled in slow start, as frame2


STEPS = [(0.0, 10), (1.0, 2), (2.0, 6), (3.0, 3), (4.0, 3)]     # (t, queue after)


def test_queue_windows_are_time_weighted():
    assert measure.queue_windows(STEPS, 0, 4, 1.0) == [10, 2, 6, 3]
    assert measure.queue_mean(STEPS, 0.5, 1.5) == pytest.approx(6.0)
    assert measure.queue_mean(STEPS, 0, 4) == pytest.approx(21 / 4)


def test_recovery_is_the_start_of_the_last_run_of_low_windows():
    assert measure.recovery_s(STEPS, 0, 4) == 3.0      # 10, 2, 6, then 3 for good
    assert measure.recovery_s(STEPS, 3, 4) == 0.0
    assert measure.recovery_s([(0.0, 9)], 0, 3) is None


def test_queue_trough_is_the_mean_of_each_windows_smallest_queue():
    # windows [0,1) [1,2) [2,3) [3,4): the level is 10, then 2, then 6, then 3
    assert measure.queue_trough(STEPS, 0, 4, 1.0) == pytest.approx((10 + 2 + 6 + 3) / 4)
    # a burst inside one window: 1 from the start, 9 at 0.2, drained to 1 at 0.9; a window
    # with no event holds the level it started with
    burst = [(0.0, 1), (0.2, 9), (0.9, 1), (2.5, 0)]
    assert measure.queue_trough(burst, 0, 3, 1.0) == pytest.approx((1 + 1 + 0) / 3)
    assert measure.queue_mean(burst, 0, 1) > 5 * measure.queue_trough(burst, 0, 1, 1.0)
    # a start after the first steps takes the level they left; the partial window at the end
    # is left out, as queue_windows leaves it
    assert measure.queue_trough(STEPS, 1.5, 4.2, 1.0) == pytest.approx((2 + 3) / 2)
    # a step exactly on a window's edge (times as queue.csv keeps them, to the microsecond)
    # opens the next window: it does not lower the one that ended there
    edge = [(14.0, 5), (15.04, 0), (15.1, 5)]
    assert measure.queue_trough(edge, 15.0, 15.1, 0.02) == pytest.approx((5 + 5 + 0 + 0 + 0) / 5)


def test_arrival_burst_weights_groups_by_their_packets(tmp_path):
    q = tmp_path / "queue.csv"
    rows = ["t_s,qlen_pkts,event"]
    # a group of 3 arrivals 10 us apart, a lone arrival, a group of 2 (a dequeue between
    # them is not an arrival), and a lone drop, an arrival that found the queue full
    for t, ev in [(1.0, "enq"), (1.00001, "enq"), (1.00002, "enq"), (1.5, "enq"),
                  (2.0, "enq"), (2.000005, "deq"), (2.00001, "enq"), (2.5, "drop"),
                  (2.7, "loss")]:
        rows.append(f"{t},0,{ev}")
    q.write_text("\n".join(rows) + "\n")
    assert measure.arrival_burst(q, 0, 3) == pytest.approx((9 + 1 + 4 + 1) / 7)
    assert measure.arrival_burst(q, 1.2, 3) == pytest.approx((1 + 4 + 1) / 4)
    assert measure.arrival_burst(q, 5, 6) == 0.0


def test_the_start_order_cases_run_only_when_named_and_fix_the_order():
    ordered = {f"{cc}_{side}" for cc in ("cubic", "reno") for side in ("ahead", "behind")}
    assert ordered.isdisjoint(cases.DEFAULT_CASES)
    assert set(cases.DEFAULT_CASES) | ordered == set(cases.CASES)
    for key, ours_at, theirs_at in (("cubic", 0, 0), ("cubic_ahead", 2, 0),
                                    ("cubic_behind", 0, 2), ("reno_ahead", 2, 0),
                                    ("reno_behind", 0, 2)):
        s = Scenario.parse(cases.scenario_toml(cases.CASES[key], cases.NETS["100M80"]))
        for rep in range(cases.REPS):
            ours, theirs = s.run("vegas_plus", "full", rep).flows
            # each start is the case's, plus at most START_JITTER_S of jitter
            assert ours_at <= ours.start <= ours_at + cases.START_JITTER_S
            assert theirs_at <= theirs.start <= theirs_at + cases.START_JITTER_S
            assert theirs.cc == key.split("_")[0]


def _run(tmp_path, jain, rates, end_s=10.0):
    """A run of 10 s whose flows sent `rates` (bit/s, flow 1 first) in each 1 s interval;
    summary.json's Jain is `jain` (the runner's, each flow's own second half)."""
    import json
    flows = [{"flow": i + 1, "end_s": end_s if i else 10.0, "retransmits": 0}
             for i in range(len(rates))]
    (tmp_path / "summary.json").write_text(json.dumps(
        {"duration_s": 10.0, "flows": flows, "jain": jain, "utilisation": 0.99}))
    (tmp_path / "queue.csv").write_text("t_s,qlen_pkts\n0,3\n")
    rows = ["flow,t0_s,t1_s,bytes,retransmits"] + [
        f"{i + 1},{t},{t + 1},{r / 8:.0f},0" for i, r in enumerate(rates) for t in range(10)]
    (tmp_path / "flows.csv").write_text("\n".join(rows) + "\n")
    return tmp_path


def test_jain_is_the_runners_and_leaves_is_its_competitions(tmp_path):
    net = cases.NETS["10M20"]
    figs = measure.figures(_run(tmp_path, 0.9, [6e6, 2e6]), net, "pair")
    assert figs["jain"] == 0.9 and figs["share"] == pytest.approx(1.5)
    # leave: both flows over the competition's second half, not summary.json's
    figs = measure.figures(_run(tmp_path, 0.9, [6e6, 2e6], end_s=4.0), net, "leave")
    assert figs["jain"] == pytest.approx(0.8)
    assert "jain" not in measure.figures(_run(tmp_path, None, [6e6]), net, "reno")
    assert measure.figures(_run(tmp_path, None, [0, 0]), net, "pair")["jain"] is None
