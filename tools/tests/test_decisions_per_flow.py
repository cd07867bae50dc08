"""Each traced flow's decisions by rule and its alpha (runner.decisions_per_flow),
and the report's per-repetition table of them: what tells a repetition in which
Vegas-A's alpha climbed from one in which it did not."""
from vegaskit.testbed import report, runner

T0 = 1000.0


def _rec(t, dport, rule, alpha, kind="decision"):
    return {"type": kind, "time_s": T0 + t, "dport": dport, "rule": rule, "alpha": alpha}


def _flows():
    return [{"flow": 1, "label": "S1 bpf_vegas_a", "avg_bps": 200000.0},
            {"flow": 2, "label": "S2 reno", "avg_bps": 600000.0}]


def test_rules_counted_and_alpha_followed_per_flow():
    p1 = runner.BASE_PORT + 1
    recs = [_rec(0.5, p1, "reno", 0),             # too few samples: no threshold in force
            _rec(1.0, p1, "ss_exit", 1), _rec(2.0, p1, "hold", 1),
            _rec(3.0, p1, "inc_adapt", 2), _rec(4.0, p1, "inc_adapt", 3),
            _rec(5.0, p1, "dec_adapt", 2),
            _rec(5.5, p1, "", 0, kind="ack"),      # per-ACK records are not decisions
            _rec(6.0, runner.BASE_PORT + 9, "inc", 1)]   # another port: another flow
    flows = _flows()
    runner.decisions_per_flow(flows, recs, T0)
    d = flows[0]["decisions"]
    assert d["count"] == 6
    assert d["rules"] == {"reno": 1, "ss_exit": 1, "hold": 1, "inc_adapt": 2, "dec_adapt": 1}
    assert (d["alpha_first"], d["alpha_max"], d["alpha_last"]) == (1, 3, 2)
    assert d["alpha_rise_s"] == 3.0
    assert "decisions" not in flows[1]          # reno: nothing of ours traced


def test_alpha_that_never_rose_and_a_flow_with_no_threshold():
    p1 = runner.BASE_PORT + 1
    flows = _flows()
    runner.decisions_per_flow(flows, [_rec(1.0, p1, "hold", 1), _rec(2.0, p1, "dec", 1)], T0)
    assert flows[0]["decisions"]["alpha_rise_s"] is None
    flows = _flows()
    runner.decisions_per_flow(flows, [_rec(1.0, p1, "reno", 0)], T0)
    assert flows[0]["decisions"] == {"count": 1, "rules": {"reno": 1}}


def test_report_lists_traced_and_named_repetitions_only():
    p1 = runner.BASE_PORT + 1
    sms = []
    for rep, rise in ((1, None), (0, 3.0)):
        flows = _flows()
        recs = [_rec(1.0, p1, "hold", 1)] + ([_rec(rise, p1, "inc_adapt", 2)] if rise else [])
        runner.decisions_per_flow(flows, recs, T0)
        sms.append({"run": "vegas_a", "rep": rep, "flows": flows})
    sms.append({"run": "reno", "rep": 0, "flows": _flows()})
    body = [r for r in report._per_rep_rows(sms, []) if r.startswith("| vegas_a")]
    assert body == ["| vegas_a | 0 | S1 bpf_vegas_a | - | 200,000 | - | 2 | hold 1, inc_adapt 1 | 1, 2, 2 | 3 |",
                    "| vegas_a | 1 | S1 bpf_vegas_a | - | 200,000 | - | 1 | hold 1 | 1, 1, 1 | - |"]
    named = [r for r in report._per_rep_rows(sms, ["reno"]) if r.startswith("| reno")]
    assert named == ["| reno | 0 | S1 bpf_vegas_a | - | 200,000 | - | - | - | - | - |",
                     "| reno | 0 | S2 reno | - | 600,000 | - | - | - | - | - |"]
    assert report._per_rep_rows(sms[2:], []) == []
