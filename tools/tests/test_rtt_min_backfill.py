"""The RTT min figure (runner.rtt_min_ms): new runs carry it, and runs made before it
existed get it from their own flows.csv when the reports are rerendered."""
import json

from vegaskit.cli.results import backfill
from vegaskit.testbed import runner

FLOWS_CSV = """flow,cc,t0_s,t1_s,bytes,bps,cwnd_bytes,rtt_us,retransmits
1,vk_ns2,0.0,1.0,100,800,2896,201045,0
1,vk_ns2,1.0,2.0,100,800,2896,194718,0
1,vk_ns2,2.0,3.0,100,800,,,
2,reno,0.0,1.0,100,800,2896,0,0
2,reno,1.0,2.0,100,800,2896,350500,0
"""


def _old_run(base, rep):
    d = base / "vegas" / f"rep{rep}"
    d.mkdir(parents=True)
    (d / "flows.csv").write_text(FLOWS_CSV)
    sm = {"run": "vegas", "rep": rep, "flows": [{"flow": 1, "rtt_p95_ms": 201.0},
                                                {"flow": 2, "rtt_p95_ms": 350.5}]}
    (d / "summary.json").write_text(json.dumps(sm))
    return sm


def test_min_of_the_intervals_rtts():
    assert runner.rtt_min_ms([201.045, 194.718]) == 194.718
    assert runner.rtt_min_ms([]) is None


def test_backfill_from_flows_csv_skips_empty_and_zero_samples(tmp_path):
    sms = [_old_run(tmp_path, 0), _old_run(tmp_path, 1)]
    out = backfill(tmp_path, sms)
    assert [fl["rtt_min_ms"] for fl in out[0]["flows"]] == [194.718, 350.5]
    one = json.loads((tmp_path / "vegas" / "rep1" / "summary.json").read_text())
    assert [fl["rtt_min_ms"] for fl in one["flows"]] == [194.718, 350.5]
    assert one["flows"][0]["rtt_p95_ms"] == 201.0          # the rest kept as it was


def test_a_summary_that_has_it_is_left_alone(tmp_path):
    sm = _old_run(tmp_path, 0)
    for fl in sm["flows"]:
        fl["rtt_min_ms"] = 1.0
    assert not runner.fill_rtt_min(sm, tmp_path / "vegas" / "rep0")
    assert [fl["rtt_min_ms"] for fl in sm["flows"]] == [1.0, 1.0]
