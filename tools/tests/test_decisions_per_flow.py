"""Each traced flow's decisions by rule and its alpha (runner.decisions_per_flow),
and the report's per-repetition table of them: what tells a repetition in which
Vegas-A's alpha climbed from one in which it did not."""
from vegaskit.testbed import report, runner

T0 = 1000.0


def _rec(t, dport, rule, alpha, kind="decision", base=40000):
    return {"type": kind, "time_s": T0 + t, "dport": dport, "rule": rule, "alpha": alpha,
            "base_rtt_us": base}


def _flows():
    return [{"flow": 1, "label": "S1 bpf_vegas_a", "avg_bps": 200000.0, "end_s": 11.0},
            {"flow": 2, "label": "S2 reno", "avg_bps": 600000.0, "end_s": 11.0}]


def test_rules_counted_and_alpha_followed_per_flow():
    p1 = runner.BASE_PORT + 1
    recs = [_rec(0.5, p1, "reno", 0),             # too few samples: no threshold in force
            _rec(1.0, p1, "ss_exit", 1, base=41234), _rec(2.0, p1, "hold", 1, base=40517),
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
    assert d["base_rtt_min_ms"] == 40.0
    # 40 from 0.5 s, 41.234 from 1 s, 40.517 from 2 s, 40 from 3 s to the end at 11 s
    assert d["base_rtt_mean_ms"] == round((40 * 0.5 + 41.234 + 40.517 + 40 * 8) / 10.5, 3)
    # 1 from 1 s, 2 from 3 s, 3 from 4 s, 2 from 5 s to the flow's end at 11 s
    assert d["alpha_mean"] == 1.9
    assert "decisions" not in flows[1]          # reno: nothing of ours traced


def test_alpha_that_never_rose_and_a_flow_with_no_threshold():
    p1 = runner.BASE_PORT + 1
    flows = _flows()
    runner.decisions_per_flow(flows, [_rec(1.0, p1, "hold", 1), _rec(2.0, p1, "dec", 1)], T0)
    assert flows[0]["decisions"]["alpha_rise_s"] is None
    flows = _flows()
    runner.decisions_per_flow(flows, [_rec(1.0, p1, "reno", 0)], T0)
    assert flows[0]["decisions"] == {"count": 1, "rules": {"reno": 1}, "at_beta": {},
                                     "base_rtt_min_ms": 40.0, "base_rtt_mean_ms": 40.0}


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
    assert body == ["| vegas_a | 0 | S1 bpf_vegas_a | - | 200,000 | - | 40, 40 | 2 | hold 1, inc_adapt 1 | 1, 2, 2, 1.8 | 3 | - |",
                    "| vegas_a | 1 | S1 bpf_vegas_a | - | 200,000 | - | 40, 40 | 1 | hold 1 | 1, 1, 1, 1 | - | - |"]
    named = [r for r in report._per_rep_rows(sms, ["reno"]) if r.startswith("| reno")]
    assert named == ["| reno | 0 | S1 bpf_vegas_a | - | 200,000 | - | -, - | - | - | - | - | - |",
                     "| reno | 0 | S2 reno | - | 600,000 | - | -, - | - | - | - | - | - |"]
    assert report._per_rep_rows(sms[2:], []) == []


def test_decisions_at_the_beta_in_force_are_counted_by_rule():
    """diff equal to the beta the previous decision left: where PIPE decides down and
    Vegas-A holds. The first decision has none before it in the trace; a record with no
    thresholds (vegas_plus's) changes nothing."""
    p1 = runner.BASE_PORT + 1

    def rec(t, rule, diff, beta):
        return _rec(t, p1, rule, max(beta - 2, 0)) | {"diff": diff, "beta": beta}
    recs = [rec(1.0, "inc", 0, 3),            # the first: no beta in force before it
            rec(2.0, "dec_adapt", 3, 2),      # 3 = 3: down (PIPE)
            rec(3.0, "reno", 5, 0),           # no thresholds recorded: beta 2 still in force
            rec(4.0, "hold", 2, 2),           # 2 = 2
            rec(5.0, "dec_adapt", 4, 2)]      # above beta: not a tie
    flows = _flows()
    runner.decisions_per_flow(flows, recs, T0)
    d = flows[0]["decisions"]
    assert d["at_beta"] == {"dec_adapt": 1, "hold": 1}
    row = [r for r in report._per_rep_rows([{"run": "pipe", "rep": 0, "flows": flows}], [])
           if r.startswith("| pipe")][0]
    assert "dec_adapt 2 (1 at diff = beta), hold 1 (1 at diff = beta), inc 1, reno 1" in row


def test_th_rise_at_inc_adapt_in_packets_per_round():
    """(Th - Th') x RTT at each decision that raised alpha: one packet more in a
    40 ms round is 25 packets/s; the first round (no Th') and other rules are left
    out, and the report gives smallest, median, largest and those under one."""
    p1 = runner.BASE_PORT + 1

    def rec(t, rule, th, th_prev, rtt_us=40000):
        return _rec(t, p1, rule, 2) | {"th": th, "th_prev": th_prev, "rtt_us": rtt_us}
    recs = [rec(1.0, "inc_adapt", 260.0, 0.0),      # no Th' yet: not a rise
            rec(2.0, "inc_adapt", 275.0, 250.0),    # 25/s x 40 ms = 1 packet
            rec(3.0, "inc_adapt", 262.5, 250.0),    # half a packet
            rec(4.0, "inc_adapt", 300.0, 200.0, rtt_us=20000),   # 2 packets
            rec(5.0, "inc", 400.0, 100.0)]          # another rule
    flows = _flows()
    runner.decisions_per_flow(flows, recs, T0)
    assert flows[0]["decisions"]["adapt_rise"] == {"n": 3, "min": 0.5, "median": 1.0,
                                                   "max": 2.0, "below_1": 1}
    row = [r for r in report._per_rep_rows([{"run": "vegas_a", "rep": 0, "flows": flows}], [])
           if r.startswith("| vegas_a")][0]
    assert row.endswith("| 0.5, 1, 2; 1 of 3 under 1 |")
    assert runner.adapt_rises([rec(1.0, "hold", 300.0, 200.0)]) == {}


TRACE_CSV = """time_s,type,netns,saddr,sport,daddr,dport,ca,state,cwnd,ssthresh,in_flight,rtt_us,base_rtt_us,cnt_rtt,diff,alpha,beta,th,th_prev,cwnd_after,ssthresh_after,rule,th_cmp,sent,outstanding,mode,foreign
1001.5,decision,1,198.18.1.1,40000,198.18.2.1,5202,bpf_vegas_a,open,10,99,0,50000,40100,5,0,1,3,1.0,0.0,11,99,inc,0,10,9,delay,0.000
1004.0,decision,1,198.18.1.1,40000,198.18.2.1,5202,bpf_vegas_a,open,11,99,0,50000,40100,5,2,2,4,1.0,0.9,12,99,inc_adapt,1,11,10,delay,0.000
"""


def test_rerender_backfills_decisions_from_a_committed_trace(tmp_path):
    """A traced repetition summarised before decisions existed gets them from its
    own trace.csv when the reports are rerendered; an untraced one stays as it was."""
    from vegaskit.cli.results import backfill
    import json
    sms = []
    for rep in (0, 1):
        d = tmp_path / "vegas_a" / f"rep{rep}"
        d.mkdir(parents=True)
        if rep == 0:
            (d / "trace.csv").write_text(TRACE_CSV)
        sm = {"run": "vegas_a", "rep": rep, "t0_monotonic": T0, "flows": _flows()}
        for fl in sm["flows"]:
            fl["rtt_min_ms"] = 50.0
        (d / "summary.json").write_text(json.dumps(sm))
        sms.append(sm)
    out = backfill(tmp_path, sms)
    d = out[0]["flows"][0]["decisions"]
    assert d["rules"] == {"inc": 1, "inc_adapt": 1} and d["alpha_rise_s"] == 4.0
    # Th 1.0 over Th' 0.9 packets/s at a 50 ms RTT: 0.005 packets per round
    assert d["adapt_rise"] == {"n": 1, "min": 0.005, "median": 0.005, "max": 0.005,
                               "below_1": 1}
    assert d["base_rtt_min_ms"] == 40.1
    kept = json.loads((tmp_path / "vegas_a" / "rep0" / "summary.json").read_text())
    assert kept["flows"][0]["decisions"] == d and kept["flows"][0]["rtt_min_ms"] == 50.0
    assert "decisions" not in out[1]["flows"][0]


def test_rerender_repairs_a_repetition_file_whose_decisions_differ_from_its_trace(tmp_path):
    """The summaries hold what the trace gives; a summary.json that disagrees with them
    (alpha_rise_s from another clock) is rewritten to match, nothing else in it changed."""
    from vegaskit.cli.results import backfill
    import json
    d = tmp_path / "vegas_a" / "rep0"
    d.mkdir(parents=True)
    (d / "trace.csv").write_text(TRACE_CSV)
    sm = {"run": "vegas_a", "rep": 0, "t0_monotonic": T0, "flows": _flows()}
    runner.fill_decisions(sm, d)                         # the summaries: right
    stale = json.loads(json.dumps(sm))
    stale["flows"][0]["decisions"]["alpha_rise_s"] = -3666.0
    stale["other"] = 1
    (d / "summary.json").write_text(json.dumps(stale))
    backfill(tmp_path, [sm, {**sm, "rep": 1}])           # 2 reps: rep dirs are used
    kept = json.loads((d / "summary.json").read_text())
    assert kept["flows"][0]["decisions"]["alpha_rise_s"] == 4.0 and kept["other"] == 1


def test_backfilled_changes_no_file_and_names_the_one_to_write(tmp_path):
    """A rerender renders every report before it writes anything: backfilled()
    gives the repaired summary.json as text and leaves the file as it was."""
    from vegaskit.cli.results import backfilled
    import json
    d = tmp_path / "vegas_a"
    d.mkdir()
    (d / "trace.csv").write_text(TRACE_CSV)
    sm = {"run": "vegas_a", "rep": 0, "t0_monotonic": T0, "flows": _flows()}
    (d / "summary.json").write_text(before := json.dumps(sm))
    out, files = backfilled(tmp_path, [sm])
    assert (d / "summary.json").read_text() == before
    assert [p for p, _ in files] == [d / "summary.json"]
    assert json.loads(files[0][1])["flows"][0]["decisions"] == out[0]["flows"][0]["decisions"]


def test_a_partial_rerun_leaves_the_rerun_files_as_the_run_made_them(tmp_path):
    """merged() backfills the runs it keeps, not the old summaries of the run it
    replaces, whose directories now hold the rerun (with its own t0)."""
    from vegaskit.cli.results import merged
    import json
    new, old = [], []
    for rep in (0, 1):
        d = tmp_path / "vegas_a" / f"rep{rep}"
        d.mkdir(parents=True)
        (d / "trace.csv").write_text(TRACE_CSV)
        sm = {"run": "vegas_a", "rep": rep, "t0_monotonic": T0, "flows": _flows()}
        runner.fill_decisions(sm, d)
        (d / "summary.json").write_text(json.dumps(sm))
        new.append(sm)
        old.append({"run": "vegas_a", "rep": rep, "t0_monotonic": T0 - 3668,
                    "flows": _flows()})
    (tmp_path / "summaries.json").write_text(json.dumps(old))
    assert merged(tmp_path, ["vegas_a"], new) == new
    for rep in (0, 1):
        kept = json.loads((tmp_path / "vegas_a" / f"rep{rep}" / "summary.json").read_text())
        assert kept["flows"][0]["decisions"]["alpha_rise_s"] == 4.0


def test_a_job_s_flows_are_found_on_its_own_ports():
    """Runs side by side serve their flows on ports of their own (runner.port_base):
    a job's trace is read at its base, and job 0's ports are another job's nothing."""
    base = runner.port_base(2)
    assert base == runner.BASE_PORT + 2 * runner.JOB_PORTS
    recs = [_rec(1.0, base + 1, "hold", 1), _rec(2.0, base + 1, "dec", 1),
            _rec(3.0, runner.BASE_PORT + 1, "inc", 1)]    # job 0's flow 1: not this run's
    flows = _flows()
    runner.decisions_per_flow(flows, recs, T0, base)
    assert flows[0]["decisions"]["count"] == 2 and flows[0]["decisions"]["rules"] == \
        {"hold": 1, "dec": 1}
    flows = _flows()
    runner.decisions_per_flow(flows, recs, T0)
    assert flows[0]["decisions"]["count"] == 1      # at the default base: job 0's alone


def test_a_job_s_trace_names_controllers_as_the_run_does():
    """trace.csv of a job reads like any run's: bpf_vegas, not its instance
    bpf_vegas.j1 (summary.json's `instances` keeps that)."""
    from vegaskit.testbed.vtrace import Trace, parse_csv
    t = Trace()
    t.text = ("time_s,type,netns,sport,dport,ca\n1.5,decision,7,40000,5302,bpf_vegas.j1\n"
              "1.6,decision,7,40001,5303,reno\n")
    t.records = parse_csv(t.text)
    runner._name_as_run(t, {"bpf_vegas.j1": "bpf_vegas"})
    assert [r["ca"] for r in parse_csv(t.text)] == ["bpf_vegas", "reno"]
    assert [r["ca"] for r in t.records] == ["bpf_vegas", "reno"]
    assert t.text.splitlines()[1] == "1.5,decision,7,40000,5302,bpf_vegas"
