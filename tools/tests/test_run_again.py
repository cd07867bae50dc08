"""A repetition whose iperf3 failed is made once more (cli/results.py run_one), as the
kernel defect of docs/DESIGN.md §10.2 can kill a flow's iperf3; any other failure, or a
second one, still stops the batch. The runs are stand-ins; the report says which
repetitions were made again."""
import types

import pytest

from vegaskit.cli import results
from vegaskit.testbed.iperf import FlowFailed
from vegaskit.testbed.scenario import Scenario
from vegaskit.testing.summaries import SCENARIO, minimal_summary


class Scen:
    def run(self, name, profile, rep=0):
        return types.SimpleNamespace(trace="decisions")


def _runs(monkeypatch, failures):
    calls = []

    def execute(r, outdir, job, plots):
        calls.append(outdir)
        outdir.mkdir(parents=True, exist_ok=True)   # as runner.execute does
        assert not (outdir / "partial").exists()    # a failed attempt's files are gone
        (outdir / "partial").write_text("x")
        if len(calls) <= len(failures):
            raise failures[len(calls) - 1]
        return {"run": "a", "rep": 1, "flows": []}
    monkeypatch.setattr(results.runner, "execute", execute)
    monkeypatch.setattr(results, "Scenario", types.SimpleNamespace(load=lambda p: Scen()))
    return calls


def test_an_iperf3_failure_makes_the_repetition_once_more(monkeypatch, tmp_path):
    calls = _runs(monkeypatch, [FlowFailed("iperf3 (vk) failed: control socket has closed")])
    sm = results.run_one(tmp_path / "s.toml", "a", "full", 1, tmp_path / "rep1", "c0ffee")
    assert len(calls) == 2 and sm["made_again_after"].startswith("iperf3 (vk) failed")
    assert sm["commit"] == "c0ffee" and (tmp_path / "rep1" / "summary.json").exists()


@pytest.mark.parametrize("failures", [
    [FlowFailed("iperf3 (vk) failed: x"), FlowFailed("iperf3 (vk) failed: again")],
    [RuntimeError("vegasctl load failed")],
])
def test_a_second_failure_or_another_kind_stops_the_batch(monkeypatch, tmp_path, failures):
    calls = _runs(monkeypatch, failures)
    with pytest.raises(RuntimeError):
        results.run_one(tmp_path / "s.toml", "a", "full", 1, tmp_path / "rep1", "c0ffee")
    assert len(calls) == len(failures)


def test_the_report_names_the_repetitions_made_again():
    from vegaskit.testbed import report
    scenario = Scenario.parse(SCENARIO)
    sm = minimal_summary(rep=3, made_again_after="iperf3 (reno) failed: control socket has "
                                                 "closed unexpectedly")
    text = report.render(scenario, "full", [sm], "make results")
    assert ("A flow's iperf3 failed in 1 repetition, each made once more (what the tables "
            "hold): reno rep 3 (iperf3 (reno) failed: control socket has closed "
            "unexpectedly).") in text
