"""The model-validation pipeline end to end on the CI profile: real flows under
emulator loss, under cross traffic and (the control) reno under the same loss;
inputs measured over the second half, the model, its own process, and PFTK."""
import json
import math
import statistics

import pytest

from vegaskit.analysis.records import read_csv
from vegaskit.cli import model_validation
from runchecks import assert_run_outputs

pytestmark = pytest.mark.kernel


def test_pipeline_measures_and_predicts(tmp_path):
    # 3 at once, as test_scenarios runs its scenarios (make results JOBS=3's path)
    assert model_validation.main(["--profile", "ci", "--out", str(tmp_path), "--jobs", "3"]) == 0
    every = read_csv(tmp_path / "validation.csv")
    # two random-loss runs and one beside cross traffic; one at 100 Mbit/s; one sparing
    # retransmissions from the random loss
    assert sorted(r["family"] for r in every) == ["fast", "linux", "linux", "linux", "spare"]
    rows = [r for r in every if r["family"] == "linux"]
    for r in every:
        p, R, base = float(r["p"]), float(r["R_s"]), float(r["base_rtt_s"])
        if "cross" in r["run"]:     # losses from the reno flow: the half may have none
            assert 0 <= p < 0.2, r
        else:                       # the emulator's loss was configured, and measured
            assert 0 < p < 0.2, r
        assert 0.04 <= base <= R < 1.0, r   # 40 or 100 ms paths
        sent, model, sim = float(r["sent_pps"]), float(r["model_pps"]), float(r["sim_pps"])
        # arrivals at the bottleneck: what it serves, at most its capacity, plus what it loses
        cap = float(r["capacity_pps"]) * (1 + float(r["loss_rate"]))
        assert 0 < float(r["goodput_pps"]) <= sent <= cap * 1.01, r
        if r["family"] == "fast":       # at p = 1% a Vegas flow is far below 100 Mbit/s
            assert sent < 0.5 * float(r["capacity_pps"]), "the 100 Mbit/s run was capacity-bound"
        assert model > 0 and sim > 0
        # the split of the error is exact: (1 + e) = (1 + closed form)(1 + process)
        total = 1 + float(r["error"])
        assert total == pytest.approx((1 + float(r["error_closed_form"])) *
                                      (1 + float(r["error_process"])), rel=1e-9)
        assert total == pytest.approx(model / sent, rel=1e-9)
    # each summary says whether its random loss spared retransmissions, and how many it spared
    found = [(f.parent, json.loads(f.read_text())) for f in tmp_path.rglob("summary.json")]
    assert len(found) == 6      # two linux runs, fast, cross, spare, and reno (the control)
    for d, sm in found:
        assert_run_outputs(sm["scenario"], sm["run"], sm, d)
    sms = [sm for _, sm in found]
    spare = [sm for sm in sms if sm["bottleneck"]["spare_retx"]]
    assert spare and all(sm["scenario"].endswith("_spare") for sm in spare)
    assert all(sm["bottleneck_spared"] == 0 for sm in sms if not sm["bottleneck"]["spare_retx"])
    # and what each sender went through, from the kernel's tracepoints: the state seconds
    # cover the flow's second half, and the random-loss runs spent time in recovery
    flows = [fl for sm in sms for fl in sm["flows"]]
    for fl in flows:
        half = (fl["end_s"] - fl["start_s"]) / 2
        assert sum(fl["ca_seconds_second_half"].values()) == pytest.approx(half, abs=0.01), fl
        assert fl["timeouts_second_half"] >= 0
    lossy = [fl for sm in sms if sm["bottleneck"]["loss"] > 0 for fl in sm["flows"]]
    assert any(fl["retransmits_traced_second_half"] > 0 for fl in lossy)
    assert any(fl["ca_seconds_second_half"]["recovery"] > 0 for fl in lossy)
    # and the validation reads them: outside Open is a fraction, measured for every run
    for r in every:
        assert 0 <= float(r["kernel_not_open"]) <= 1 and int(r["kernel_timeouts"]) >= 0, r
    assert "outside Open (kernel)" in (tmp_path / "report.md").read_text()
    control = read_csv(tmp_path / "control_reno.csv")
    assert len(control) == 1 and control[0]["cc"] == "reno"
    assert 0 < float(control[0]["p"]) < 0.2 and math.isfinite(float(control[0]["error"]))
    assert (tmp_path / "model_vs_measured.png").stat().st_size > 0
    # the report's summary is the CSV's, recomputed
    report = (tmp_path / "report.md").read_text()
    random_loss = [r for r in rows if r["run"].startswith("model_validation/")]
    mean_abs = statistics.mean(abs(float(r["error"])) for r in random_loss)
    worst = max(abs(float(r["error"])) for r in random_loss)
    assert f"| model_validation | all | 2 | {mean_abs:.1%} | {worst:.1%} |" in report
    assert f"PFTK against reno: {abs(float(control[0]['error'])):.1%} over 1 runs" in report
