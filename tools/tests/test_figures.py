"""analysis/figures.py: the papers' figures against repeated runs, and the verdicts."""
import pytest

from vegaskit.analysis import figures


def summary(run: str, rep: int, s1: float, s2: float, cc1: str = "vk_ns2", cc2: str = "reno",
            queue: float = 3.0) -> dict:
    return {"run": run, "rep": rep, "scenario": "t",
            "flows": [{"label": f"S1 {cc1}", "cc": cc1, "avg_bps": s1, "completion_s": None,
                       "cwnd_median_kb": 10.0},
                      {"label": f"S2 {cc2}", "cc": cc2, "avg_bps": s2, "completion_s": None,
                       "cwnd_median_kb": 20.0}],
            "queue_mean_pkts": 1.0, "queue_p95_pkts": 2, "retransmits": 4, "utilisation": 0.9,
            "links": {"bottleneck": {"queue_mean_pkts": 1.0, "queue_p95_pkts": 2,
                                     "queue_delay_p95_ms": 24.0},
                      "s1": {"queue_mean_pkts": queue, "queue_p95_pkts": 9,
                             "queue_delay_p95_ms": 108.0}},
            "deepest_queue_link": "s1"}


RUNS = {"vegas": {"cc": "vk_ns2"}, "vegas_a": {"cc": "bpf_vegas_a"}}


def test_metrics_are_lifetime_averages_and_the_deepest_queue():
    sm = summary("vegas", 0, 100_000, 400_000)
    assert figures.metric(sm, "throughput:S1") == 100_000
    assert figures.metric(sm, "ratio:{cc}/reno", {"cc": "vk_ns2"}) == 0.25
    assert figures.metric(sm, "jain") == pytest.approx(500_000 ** 2 / (2 * (1e10 + 1.6e11)))
    assert figures.metric(sm, "std") == pytest.approx(212_132.03, rel=1e-6)   # sample std
    assert figures.metric(sm, "queue_mean") == 3.0          # s1, not the bottleneck
    assert figures.metric(sm, "cwnd:S2") == 20.0
    with pytest.raises(figures.FigureError):
        figures.metric(sm, "throughput:S9")
    with pytest.raises(figures.FigureError):
        figures.metric(sm, "ratio:bpf_vegas/reno")


def test_egress_queue_is_the_flows_egress_links_averaged_and_none_without_them():
    sm = summary("vegas", 0, 100_000, 400_000)
    for i, fl in enumerate(sm["flows"], 1):
        fl["flow"] = i
    assert figures.metric(sm, "egress_queue") is None         # direct edges: no dN link
    sm["links"]["d1"] = {"queue_mean_pkts": 6.0}
    assert figures.metric(sm, "egress_queue") is None         # one flow's link unknown
    sm["links"]["d2"] = {"queue_mean_pkts": 1.0}
    assert figures.metric(sm, "egress_queue") == 3.5
    figures.validate({"figures": [{"id": "q", "run": "vegas", "metric": "egress_queue",
                                   "value": 1.0}]})


def test_a_figure_is_reproduced_when_inside_the_interval_of_six():
    sms = [summary("vegas", r, 100_000 + 10_000 * r, 500_000) for r in range(6)]
    paper = {"figures": [{"id": "in", "run": "vegas", "metric": "throughput:S1", "value": 140_000},
                         {"id": "out", "run": "vegas", "metric": "throughput:S1", "value": 160_000}]}
    rows = figures.evaluate(paper, sms, RUNS)
    assert [r["verdict"] for r in rows] == ["reproduced", "differs"]
    assert rows[0]["ours"]["low"] == 100_000 and rows[0]["ours"]["high"] == 150_000
    assert rows[0]["ours"]["coverage"] == pytest.approx(1 - 2 / 64)
    assert figures.table_verdict(rows) == "partly"


def test_a_claim_must_hold_in_every_repetition():
    sms = [summary("vegas", r, 100_000, 400_000) for r in range(6)]
    sms += [summary("vegas_a", r, 150_000 if r else 90_000, 400_000, cc1="bpf_vegas_a")
            for r in range(6)]
    claim = {"id": "A > V", "left": {"run": "vegas_a", "metric": "throughput:S1"}, "op": ">",
             "right": {"run": "vegas", "metric": "throughput:S1"}}
    row = figures.evaluate({"claims": [claim]}, sms, RUNS)[0]
    assert (row["holds"], row["of"], row["verdict"]) == (5, 6, "differs")
    sms[6]["flows"][0]["avg_bps"] = 120_000
    row = figures.evaluate({"claims": [claim]}, sms, RUNS)[0]
    assert (row["holds"], row["verdict"]) == (6, "reproduced")


def test_too_few_runs_and_missing_runs_give_no_verdict():
    sms = [summary("vegas", r, 100_000, 400_000) for r in range(2)]
    paper = {"figures": [{"id": "x", "run": "vegas", "metric": "throughput:S1", "value": 1e5},
                         {"id": "y", "run": "vegas_a", "metric": "throughput:S1", "value": 1e5}]}
    rows = figures.evaluate(paper, sms, RUNS)
    assert [r["verdict"] for r in rows] == ["too few runs", "not run"]
    assert figures.table_verdict(rows) == "not run"


@pytest.mark.parametrize("paper,msg", [
    ({"figures": [{"id": "x", "run": "v", "metric": "throughput:S1"}]}, "needs id, run"),
    ({"figures": [{"id": "x", "run": "v", "metric": "speed", "value": 1}]}, "is not one of"),
    ({"figures": [{"id": "x", "run": "v", "metric": "jain", "value": "1"}]}, "must be a number"),
    ({"claims": [{"id": "c", "left": {"run": "v", "metric": "jain"}, "op": ">=",
                  "right": 1}]}, "op must be"),
    ({"claims": [{"id": "c", "left": 1, "op": ">", "right": 1}]}, "left must be"),
])
def test_malformed_paper_sections_are_refused(paper, msg):
    with pytest.raises(figures.FigureError, match=msg):
        figures.validate(paper)
