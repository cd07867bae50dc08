"""make vegas-plus's pure parts: the generated scenarios and the figures taken
from a run's queue log (tools/vegaskit/vegasplus/)."""
from __future__ import annotations

import pytest

from vegaskit.testbed.scenario import Scenario
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


def test_buffers_are_one_bdp_and_at_least_20_packets():
    assert [n.buffer for n in cases.NETS.values()] == [20, 67, 167, 667]


STEPS = [(0.0, 10), (1.0, 2), (2.0, 6), (3.0, 3), (4.0, 3)]     # (t, queue after)


def test_queue_windows_are_time_weighted():
    assert measure.queue_windows(STEPS, 0, 4, 1.0) == [10, 2, 6, 3]
    assert measure.queue_mean(STEPS, 0.5, 1.5) == pytest.approx(6.0)
    assert measure.queue_mean(STEPS, 0, 4) == pytest.approx(21 / 4)


def test_recovery_is_the_start_of_the_last_run_of_low_windows():
    assert measure.recovery_s(STEPS, 0, 4) == 3.0      # 10, 2, 6, then 3 for good
    assert measure.recovery_s(STEPS, 3, 4) == 0.0
    assert measure.recovery_s([(0.0, 9)], 0, 3) is None
