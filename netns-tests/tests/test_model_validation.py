"""The model-validation pipeline end to end on the CI profile: real flows under
emulator loss and under cross traffic, measured inputs, model predictions."""
import math

import pytest

from vegaskit.analysis.records import read_csv
from vegaskit.cli import model_validation

pytestmark = pytest.mark.kernel


def test_pipeline_measures_and_predicts(tmp_path):
    assert model_validation.main(["--profile", "ci", "--out", str(tmp_path)]) == 0
    rows = read_csv(tmp_path / "validation.csv")
    assert len(rows) == 3          # two random-loss runs, one cross-traffic run
    for r in rows:
        p, R, base = float(r["p"]), float(r["R_s"]), float(r["base_rtt_s"])
        assert 0 < p < 0.2, r       # loss was configured, and measured
        assert 0.04 <= base <= R < 1.0, r   # 40 or 100 ms paths
        assert float(r["measured_pps"]) > 0 and float(r["model_pps"]) > 0
        assert math.isfinite(float(r["error"]))
    assert (tmp_path / "model_vs_measured.png").stat().st_size > 0
    # the report's summary is the CSV's, recomputed
    report = (tmp_path / "report.md").read_text()
    mean_abs = sum(abs(float(r["error"])) for r in rows) / len(rows)
    worst = max(abs(float(r["error"])) for r in rows)
    assert f"| average absolute error | {mean_abs:.1%} |" in report
    assert f"| worst | {worst:.1%} |" in report
